import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';

import { beforeAll, describe, expect, it } from 'vitest';

import { REPO_ROOT, sharedDataDir } from '../../check/data-dir.js';

const MALLORY = path.join(REPO_ROOT, 'bin', 'mallory.js');
const ETCD_DIR = path.join(sharedDataDir(), 'porcupine-etcd');
const STALE_READ = path.join(REPO_ROOT, 'test', 'fixtures', 'histories', 'stale-read.history.txt');
/** Runs per case: the old code exited 0 whenever the pipe closed before its first line, so every run. */
const RUNS = 4;
const TIMEOUT_MS = 60_000;

interface Ended {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stderr: string;
}

/** `mallory ARGS | <reader that quits at once>`: the read end of stdout's pipe closes before Mallory writes. */
async function checkWithStdoutClosed(args: readonly string[]): Promise<Ended> {
  const child = spawn(process.execPath, [MALLORY, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout.destroy();
  let stderr = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (text: string) => {
    stderr += text;
  });
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => {
      resolve({ code, signal, stderr });
    });
  });
}

beforeAll(() => {
  if (!existsSync(path.join(REPO_ROOT, 'dist', 'cli', 'main.js'))) {
    throw new Error('dist/ is missing: run `npm run build` first (npm test does)');
  }
});

describe('standard output closed by its reader: the verdict still sets the exit status', () => {
  const cases: [string, string[], number][] = [
    ['not linearizable, text', [path.join(ETCD_DIR, 'etcd_000.log'), path.join(ETCD_DIR, 'etcd_001.log')], 1],
    ['not linearizable, --json', [path.join(ETCD_DIR, 'etcd_000.log'), '--json'], 1],
    ['a stale read', [STALE_READ], 1],
    ['linearizable', [path.join(ETCD_DIR, 'etcd_002.log')], 0],
  ];
  it.each(cases)(
    '%s',
    async (_name, args, status) => {
      for (let run = 0; run < RUNS; run++) {
        const ended = await checkWithStdoutClosed(['check', ...args]);
        expect(ended).toEqual({ code: status, signal: null, stderr: '' });
      }
    },
    TIMEOUT_MS,
  );
});
