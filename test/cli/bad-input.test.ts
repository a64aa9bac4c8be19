import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

import { describe, expect, it, onTestFinished } from 'vitest';

import { REPO_ROOT, sharedDataDir } from '../check/data-dir.js';
import { mallory } from './_helpers/cli.js';

const NEVER_SETTLES = path.join(REPO_ROOT, 'test', 'fixtures', 'modules', 'never-settles.mjs');
const MALLORY = path.join(REPO_ROOT, 'bin', 'mallory.js');
const STACK_LINE = /^\s+at /m;

describe('a module whose top-level await never settles', () => {
  it.each(['--system', '--workload'])('%s: one line, exit 2', async (flag) => {
    const { code, stderr } = await mallory('run', flag, NEVER_SETTLES, '--time', '2s');
    expect(code).toBe(2);
    expect(stderr).toBe(
      `mallory: ${flag} ${NEVER_SETTLES}: module ${NEVER_SETTLES} did not finish loading (its top-level await never settled): make every top-level await resolve or reject\n`,
    );
  });
});

describe('standard output closed by its reader', () => {
  it('mallory check F | head -1 ends quietly, with the verdict as its status (etcd_000 is not linearizable)', async () => {
    const files = ['etcd_000.log', 'etcd_001.log', 'etcd_002.log', 'etcd_003.log'].map((f) =>
      path.join(sharedDataDir(), 'porcupine-etcd', f),
    );
    const script = `"${process.execPath}" "${MALLORY}" check ${files.map((f) => `"${f}"`).join(' ')} | head -1; echo "status=\${PIPESTATUS[0]}" >&2`;
    const { stdout, stderr } = await promisify(execFile)('bash', ['-c', script]);
    expect(stdout.split('\n').filter((l) => l !== '')).toHaveLength(1);
    expect(stderr).not.toMatch(STACK_LINE);
    expect(stderr).not.toMatch(/EPIPE/);
    expect(stderr.trim()).toBe('status=1');
  });
});

describe('a schedule is validated whole before the cluster starts', () => {
  const cases: [string, string][] = [
    [
      '{"atMs": 1000, "f": "kill", "nodes": ["n9"]}',
      'nodes: no node n9 in this run (its nodes are n1, n2, n3)',
    ],
    [
      '{"atMs": 1000, "f": "start-packet", "value": {"target": "all", "lossPct": 1000}}',
      'value.lossPct: Number must be less than or equal to 100',
    ],
    [
      '{"atMs": 1000, "f": "start-packet", "value": {"target": "all", "delayMs": -5}}',
      'value.delayMs: Number must be greater than or equal to 0',
    ],
    ['{"atMs": 1e400, "f": "kill", "value": "leader"}', 'atMs: Number must be finite'],
    [
      '{"atMs": 1000, "f": "start-partition", "groups": [["n1", "n1"], ["n1"]]}',
      'groups: n1 is named twice; each node belongs to one group',
    ],
    [
      '{"atMs": 1000, "f": "kill", "value": "n9"}',
      'value: kill takes one, minority, majority, all, leader or a list of nodes, not "n9"; to name a node write "nodes": ["n9"]',
    ],
  ];
  it.each(cases)('%s', async (line, problem) => {
    const dir = mkdtempSync(path.join(tmpdir(), 'mallory-schedule-'));
    onTestFinished(() => {
      rmSync(dir, { recursive: true, force: true });
    });
    const file = path.join(dir, 'schedule.jsonl');
    // The bad line comes after a good one: the run must refuse before it starts, not when it gets there.
    writeFileSync(file, `{"atMs": 0, "f": "kill", "value": "one"}\n${line}\n`);
    const store = path.join(dir, 'store');
    const { code, stderr } = await mallory(
      'run',
      '--schedule',
      file,
      '--nodes',
      '3',
      '--time',
      '5s',
      '--store',
      store,
    );
    expect(code).toBe(2);
    expect(stderr).toBe(`mallory: ${file}:2: ${problem}\n`);
    expect(readdirSync(dir)).toEqual(['schedule.jsonl']);
  });
});

describe('an adapter whose launch command does not exist', () => {
  it('one line naming the node and what to do, exit 2; the run can still be reported', async () => {
    const store = mkdtempSync(path.join(tmpdir(), 'mallory-launch-'));
    onTestFinished(() => {
      rmSync(store, { recursive: true, force: true });
    });
    const system = path.join(REPO_ROOT, 'test', 'fixtures', 'systems', 'kvraft-missing-binary.ts');
    const { code, stderr } = await mallory('run', '--system', system, '--time', '5s', '--store', store);
    expect(code).toBe(2);
    expect(stderr).not.toMatch(STACK_LINE);
    expect(stderr.trim().split('\n').at(-1)).toBe(
      "mallory: the system adapter's launch(n1): command mallory-test-no-such-server not found or not executable: install it or give its full path",
    );
    const [runDir] = readdirSync(path.join(store, 'kvraft-missing-binary')).filter((d) => d !== 'latest');
    const report = await mallory('report', path.join(store, 'kvraft-missing-binary', runDir));
    expect(report.code).toBe(0);
    expect(report.stderr).not.toMatch(STACK_LINE);
  });
});

describe("Jepsen's node flags", () => {
  it.each([
    [
      ['--nodes', 'n1,n2,n3'],
      'mallory: --nodes takes how many nodes (they are named n1 … nN), got "n1,n2,n3": to run the nodes on hosts, give them to --hosts (--hosts n1,n2,n3, or --hosts FILE with one host a line)',
    ],
    [
      ['--nodes-file', '/nowhere/nodes'],
      "mallory: --nodes-file is Jepsen's flag: give the file to --hosts FILE (one host a line)",
    ],
  ])('%s: one line pointing at --hosts, exit 2', async (flags, line) => {
    const { code, stderr } = await mallory('run', ...flags, '--time', '5s');
    expect(code).toBe(2);
    expect(stderr).toBe(`${line}\n`);
  });
});

describe('a cluster whose every node exits while starting', () => {
  it("fails at once, not at its start-up timeout: one line with each node's exit, exit 2; the run can be reported", async () => {
    const store = mkdtempSync(path.join(tmpdir(), 'mallory-exits-'));
    onTestFinished(() => {
      rmSync(store, { recursive: true, force: true });
    });
    const system = path.join(REPO_ROOT, 'test', 'fixtures', 'systems', 'kvraft-exits-at-once.ts');
    // A start-up timeout far past the test's own: only failing at once can pass.
    const { code, stderr } = await mallory(
      'run',
      '--system',
      system,
      '--time',
      '5s',
      '--startup-timeout',
      '10m',
      '--store',
      store,
    );
    expect(code).toBe(2);
    expect(stderr).not.toMatch(STACK_LINE);
    const [runDir] = readdirSync(path.join(store, 'kvraft-exits-at-once')).filter((d) => d !== 'latest');
    const exit = (n: string) => `${n} exited with code 3 ("fatal: snapshot file truncated")`;
    expect(stderr.trim().split('\n').at(-1)).toBe(
      `mallory: kvraft-exits-at-once: every node exited while starting (${['n1', 'n2', 'n3'].map(exit).join('; ')}): see ${path.join(store, 'kvraft-exits-at-once', runDir, 'nodes')}`,
    );
    const report = await mallory('report', path.join(store, 'kvraft-exits-at-once', runDir));
    expect(report.code).toBe(0);
  });
});

describe('an adapter whose client has no close', () => {
  it('is a client with nothing to close: the run ends as any other, no internal error', async () => {
    const store = mkdtempSync(path.join(tmpdir(), 'mallory-no-close-'));
    const system = path.join(REPO_ROOT, 'test', 'fixtures', 'systems', 'kvraft-no-close.ts');
    onTestFinished(() => {
      rmSync(store, { recursive: true, force: true });
    });
    const { code, stdout, stderr } = await mallory(
      'run',
      '--system',
      system,
      '--time',
      '8s',
      '--faults',
      'kill,partition',
      '--seed',
      '1',
      '--store',
      store,
    );
    expect(stderr).not.toMatch(STACK_LINE);
    expect(stderr).not.toMatch(/internal error/);
    expect([0, 1], stderr).toContain(code);
    expect(stdout + stderr).toMatch(/ops ok [1-9]/);
  });
});
