import { spawn } from 'node:child_process';

import { afterEach, describe, expect, it } from 'vitest';

import {
  unstoppedTasks,
  waitGroupsStopped,
  waitGroupsStoppedScript,
} from '../../../src/cluster/_internals/group-stopped.js';
import { LocalRuntime } from '../../../src/cluster/runtime/local.js';

/** A process group of two busy processes (a shell and its child), as a node with a helper. */
function busyGroup(): number {
  const child = spawn('sh', ['-c', 'while :; do :; done & while :; do :; done'], {
    detached: true,
    stdio: 'ignore',
  });
  groups.push(child.pid!);
  return child.pid!;
}
const groups: number[] = [];
/** The shell form's polls in the test, and the least each sleeps (`sleep 0.01`). */
const POLLS = 20;
const POLL_SLEEP_MS = 10;
const EXEC_BOUND_MS = 120_000;
afterEach(() => {
  for (const g of groups.splice(0)) {
    try {
      process.kill(-g, 'SIGKILL');
    } catch {
      // gone
    }
  }
});

/** Until both processes of the group are there. */
async function twoProcesses(pgid: number): Promise<void> {
  while (new Set(unstoppedTasks(new Set([pgid])).map((t) => t.split('/')[0])).size < 2) {
    await new Promise((r) => setTimeout(r, 5));
  }
}

describe('waiting for stopped process groups', () => {
  it('lists the running tasks of a group, none once SIGSTOP has stopped them all, and them again after SIGCONT', async () => {
    const pgid = busyGroup();
    await twoProcesses(pgid);
    const other = busyGroup();
    await twoProcesses(other);
    process.kill(-pgid, 'SIGSTOP');
    expect(waitGroupsStopped(new Set([pgid]), 5_000)).toEqual([]);
    // Only the groups asked about: the other one runs on.
    expect(unstoppedTasks(new Set([other])).length).toBe(2);
    expect(waitGroupsStopped(new Set([other]), 20).length).toBe(2);
    process.kill(-pgid, 'SIGCONT');
    await twoProcesses(pgid);
  });

  it(
    'the shell form on a host waits the same way: it ends at once for stopped groups, after its bound for running ones',
    async () => {
      const stopped = busyGroup();
      const running = busyGroup();
      await twoProcesses(stopped);
      await twoProcesses(running);
      process.kill(-stopped, 'SIGSTOP');
      const runtime = new LocalRuntime();
      const sh = async (script: string): Promise<{ code: number; ms: number }> => {
        const start = performance.now();
        // Each poll forks a pipeline: on a loaded machine one can take a second, so the exec's bound
        // is far beyond what the polls can cost.
        const r = await runtime.exec(['sh', '-c', script], { timeoutMs: EXEC_BOUND_MS });
        return { code: r.code, ms: performance.now() - start };
      };
      // A group that never stops holds it for all its polls: each sleeps 10 ms at least.
      const held = await sh(waitGroupsStoppedScript([running], POLLS));
      expect(held.code).toBe(0);
      expect(held.ms).toBeGreaterThanOrEqual(POLLS * POLL_SLEEP_MS);
      // A stopped group ends it at its first poll: one pipeline, against the held one's twenty.
      const free = await sh(waitGroupsStoppedScript([stopped], POLLS));
      expect(free.code).toBe(0);
      expect(free.ms).toBeLessThan(held.ms / 2);
      // A group that is gone does not hold it either.
      process.kill(-stopped, 'SIGKILL');
      expect((await sh(`${waitGroupsStoppedScript([stopped], POLLS)}; echo done`)).code).toBe(0);
    },
    EXEC_BOUND_MS,
  );
});
