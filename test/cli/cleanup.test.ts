import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { REPO_ROOT } from '../check/data-dir.js';

const MALLORY = path.join(REPO_ROOT, 'bin', 'mallory.js');
/** How long the slow removal waits for the test's go before giving up (it never should). */
const GO_WAIT_TRIES = 200;

describe('mallory cleanup', () => {
  const root = mkdtempSync(path.join(tmpdir(), 'mallory-cleanup-'));
  afterAll(() => {
    rmSync(root, { recursive: true, force: true });
  });

  it('says each resource as it removes it, not all at the end (a removal over SSH may take seconds)', async () => {
    const state = path.join(root, 'state');
    mkdirSync(state);
    const left = path.join(root, 'left-dir');
    mkdirSync(left);
    const go = path.join(root, 'go');
    // A removal that lasts until the test has read the line of the one before it: with the lines
    // held until the end, it would wait for nothing and the test would time out.
    const slow = [
      'sh',
      '-c',
      `for i in $(seq ${GO_WAIT_TRIES}); do [ -e ${go} ] && exit 0; sleep 0.05; done; exit 1`,
    ];
    const lines = [
      // This process's PID with another start time: a fuzzer that is gone.
      { t: 'owner', pid: process.pid, startTime: 'gone', runDir: path.join(root, 'no-run') },
      { t: 'add', id: 1, resource: { kind: 'command', undo: slow, label: 'rule on host h1 (slow)' } },
      { t: 'add', id: 2, resource: { kind: 'dir', path: left } },
    ];
    writeFileSync(path.join(state, 'run-x.jsonl'), lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
    const child = spawn(process.execPath, [MALLORY, 'cleanup'], {
      env: { ...process.env, MALLORY_STATE_DIR: state },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    const exited = once(child, 'exit') as Promise<[number | null]>;
    await new Promise<void>((done) => {
      child.stdout.on('data', (b: Buffer) => {
        stdout += b.toString();
        if (stdout.includes(`  removed dir ${left}\n`)) done();
      });
    });
    // The first removal is said while the second still runs.
    expect(child.exitCode).toBeNull();
    expect(stdout).toContain('run ');
    expect(stdout).not.toContain('rule on host h1');
    expect(existsSync(left)).toBe(false);
    writeFileSync(go, '');
    const [code] = await exited;
    expect(code).toBe(0);
    expect(stdout.split('\n').filter((l) => l !== '')).toEqual([
      `run ${path.join(root, 'no-run')} (fuzzer pid ${process.pid} gone): 2 resources to remove`,
      `  removed dir ${left}`,
      '  removed rule on host h1 (slow)',
      'mallory cleanup: removed 2 resources of 1 runs',
    ]);
  });
});
