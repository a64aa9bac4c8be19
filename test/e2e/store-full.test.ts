import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import {
  disposeSandbox,
  isRoot,
  mallory,
  registryFiles,
  runStatus,
  sandbox,
  type Sandbox,
} from './helpers.js';
import { settledLeftovers, snapshot } from './host.js';

/**
 * A store on a disk that fills up during the run (a tmpfs of a few hundred KiB the test mounts):
 * the run ends in one line naming the store, exit 2, with its processes removed and its registry
 * kept; once space is freed `mallory cleanup` marks it and `mallory report` says it was cut short.
 */

const STACK_LINE = /^\s+at /m;
/** Room for the store's database and the start of the history, not for a 30 s run. */
const TMPFS_SIZE = '600k';

/** Mounting a tmpfs needs root; elsewhere the test says why it did not run. */
const SKIP = isRoot ? '' : ' (skipped: not root, and mounting the small tmpfs the store goes on needs root)';

describe.skipIf(!isRoot)(`a store on a disk that fills up${SKIP}`, () => {
  let mountPoint = '';
  let box: Sandbox;
  beforeAll(() => {
    mountPoint = mkdtempSync(join(tmpdir(), 'mallory-full-'));
    const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${TMPFS_SIZE}`, 'tmpfs', mountPoint]);
    if (mounted.status !== 0) throw new Error(`mount tmpfs: ${mounted.stderr.toString()}`);
    box = sandbox();
  });
  afterAll(() => {
    disposeSandbox(box);
    spawnSync('umount', [mountPoint]);
    rmSync(mountPoint, { recursive: true, force: true });
  });

  it('ends the run in one line, exit 2, nothing left running; cleanup and report say it was cut short', async () => {
    const before = snapshot();
    const store = join(mountPoint, 'store');
    mkdirSync(store);
    const result = await mallory(['run', '--time', '30s', '--seed', '1', '--store', store], box);
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).not.toMatch(STACK_LINE);
    expect(result.stderr).not.toMatch(/internal error/);
    const runDir = realpathSync(join(store, 'latest'));
    expect(result.stderr.trim().split('\n').at(-1)).toMatch(
      new RegExp(
        `^mallory: the disk under the store ${runDir} is full \\((SQLITE_FULL|ENOSPC)\\): the run was cut short; free space there \\(or give --store a directory on another disk\\), then run mallory cleanup to mark it$`,
      ),
    );
    expect(await settledLeftovers(before, box)).toEqual([]);
    expect(runStatus(runDir).status).toBe('running');
    expect(registryFiles(box)).toHaveLength(1);

    // The user frees space (the nodes' logs) and cleans up.
    rmSync(join(runDir, 'nodes'), { recursive: true, force: true });
    const cleanup = await mallory(['cleanup'], box);
    expect(cleanup.code, cleanup.stderr).toBe(0);
    expect(cleanup.stdout).toContain(`marked incomplete: ${runDir}`);
    expect(registryFiles(box)).toEqual([]);

    const report = await mallory(['report', runDir], box);
    expect(report.code, report.stderr).toBe(0);
    expect(report.stderr).toBe(
      `mallory: report: ${runDir} was cut short (the fuzzer stopped before recording its end; mallory cleanup marked it incomplete): the report shows what it recorded\n`,
    );
    expect(readdirSync(runDir)).toContain('report.html');
  });
});
