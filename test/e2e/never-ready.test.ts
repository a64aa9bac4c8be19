import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { realpathSync } from 'node:fs';

import { afterEach, describe, expect, it } from 'vitest';

import {
  BIN,
  disposeSandbox,
  registryFiles,
  REPO,
  runStatus,
  sandbox,
  type Sandbox,
  waitFor,
} from './helpers.js';
import { settledLeftovers, snapshot } from './host.js';

/**
 * A system whose ready() returns a promise that never settles: start-up must still end at its
 * deadline, in one line, and one SIGTERM during start-up must end the run at once and remove
 * everything it made.
 */

const NEVER_READY = join(REPO, 'test', 'fixtures', 'systems', 'never-ready.ts');
const STACK_LINE = /^\s+at /m;
/** The start-up deadline the first test gives (the default is 60 s). */
const STARTUP_TIMEOUT_S = 5;
/** That deadline with the launch, the teardown and a loaded machine around it: well short of 60 s. */
const STARTUP_BOUND_MS = 35_000;
/** A stop asked for during start-up: the nodes' teardown, nothing more. */
const STOP_BOUND_MS = 15_000;

function startRun(box: Sandbox, extra: readonly string[] = []) {
  const args = [
    'run',
    '--system',
    NEVER_READY,
    '--time',
    '10s',
    '--seed',
    '1',
    '--store',
    box.store,
    ...extra,
  ];
  const child = spawn(process.execPath, [BIN, ...args], {
    env: box.env,
    cwd: REPO,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('close', resolve));
  return { child, exited, stderr: () => stderr };
}

describe('a system whose ready() never answers', () => {
  const boxes: Sandbox[] = [];
  afterEach(() => {
    for (const b of boxes.splice(0)) disposeSandbox(b);
  });

  it('start-up ends at its deadline in one line naming the system, exit 2, nothing left', async () => {
    const box = sandbox();
    boxes.push(box);
    const before = snapshot();
    const started = Date.now();
    const run = startRun(box, ['--startup-timeout', `${STARTUP_TIMEOUT_S}s`]);
    const code = await run.exited;
    const elapsedMs = Date.now() - started;
    expect(code, run.stderr()).toBe(2);
    expect(elapsedMs).toBeLessThan(STARTUP_BOUND_MS);
    const stderr = run.stderr();
    expect(stderr).not.toMatch(STACK_LINE);
    expect(stderr).not.toMatch(/internal error/);
    const runDir = realpathSync(join(box.store, 'latest'));
    const lines = stderr.trim().split('\n');
    expect(lines.filter((l) => l.includes('ready()'))).toHaveLength(1);
    expect(lines.at(-1)).toBe(
      `mallory: never-ready: ready() never answered within ${STARTUP_TIMEOUT_S} s of starting (its promise neither resolved nor rejected): make ready() settle, and stop when its signal aborts; node logs in ${join(runDir, 'nodes')}`,
    );
    expect(runStatus(runDir).status).toBe('error');
    expect(registryFiles(box)).toEqual([]);
    expect(await settledLeftovers(before, box)).toEqual([]);
  });

  it('one SIGTERM during start-up ends the run promptly: interrupted, exit 130, nothing left', async () => {
    const box = sandbox();
    boxes.push(box);
    const before = snapshot();
    const run = startRun(box);
    await waitFor(() => run.stderr().includes('run dir'), 30_000);
    // Let the nodes start and the first ready() call go out (and hang).
    await new Promise((r) => setTimeout(r, 3000));
    const stopped = Date.now();
    run.child.kill('SIGTERM');
    const code = await run.exited;
    expect(Date.now() - stopped).toBeLessThan(STOP_BOUND_MS);
    expect(code, run.stderr()).toBe(130);
    expect(run.stderr()).not.toMatch(STACK_LINE);
    expect(runStatus(realpathSync(join(box.store, 'latest'))).status).toBe('interrupted');
    expect(registryFiles(box)).toEqual([]);
    expect(await settledLeftovers(before, box)).toEqual([]);
  });
});
