import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';

import { describe, expect, it } from 'vitest';

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
  it('mallory check F | head -1 ends quietly', async () => {
    const files = ['etcd_000.log', 'etcd_001.log', 'etcd_002.log', 'etcd_003.log'].map((f) =>
      path.join(sharedDataDir(), 'porcupine-etcd', f),
    );
    const script = `"${process.execPath}" "${MALLORY}" check ${files.map((f) => `"${f}"`).join(' ')} | head -1; echo "status=\${PIPESTATUS[0]}" >&2`;
    const { stdout, stderr } = await promisify(execFile)('bash', ['-c', script]);
    expect(stdout.split('\n').filter((l) => l !== '')).toHaveLength(1);
    expect(stderr).not.toMatch(STACK_LINE);
    expect(stderr).not.toMatch(/EPIPE/);
    expect(stderr.trim()).toBe('status=0');
  });
});
