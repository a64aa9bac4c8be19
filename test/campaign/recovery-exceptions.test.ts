import { describe, expect, it } from 'vitest';

import { expectedNoRecovery } from '../../src/campaign/recovery-exceptions.js';
import type { ScheduleEntry } from '../../src/nemesis/nemesis.js';
import type { ClusterView, RecoveryException } from '../../src/systems/system.js';

const cluster = { members: ['n1', 'n2', 'n3'] } as unknown as ClusterView;
const fsyncError: ScheduleEntry = { atMs: 5180, f: 'fsync-error', value: 'one', nodes: ['n1'] };
const kill: ScheduleEntry = { atMs: 1000, f: 'kill', value: 'leader', nodes: ['n3'] };

/** An exception whose state the nodes are in (`answer`) or not (undefined), counting the questions. */
function exception(answer: string | undefined | Error): RecoveryException & { asked: number } {
  const e = {
    after: ['fsync-error'],
    why: 'documented upstream',
    asked: 0,
    holds: (): Promise<string | undefined> => {
      e.asked++;
      return answer instanceof Error ? Promise.reject(answer) : Promise.resolve(answer);
    },
  };
  return e;
}

describe('expectedNoRecovery', () => {
  it('a declared state the nodes are in, after its fault ran, explains the no-recovery', async () => {
    const stuck = exception('n3, a primary, answers PING with -MISCONF');
    expect(
      await expectedNoRecovery({ recoveryExceptions: [stuck] }, [kill, fsyncError], cluster, 100),
    ).toEqual({
      why: 'documented upstream',
      shown: 'n3, a primary, answers PING with -MISCONF',
      after: 'fsync-error n1 at 5.2 s',
    });
  });

  it('explains nothing without its fault in the schedule (the nodes are not even asked)', async () => {
    const stuck = exception('n3 answers -MISCONF');
    expect(await expectedNoRecovery({ recoveryExceptions: [stuck] }, [kill], cluster, 100)).toBeUndefined();
    expect(stuck.asked).toBe(0);
  });

  it('explains nothing when the nodes are not in that state, or the question fails', async () => {
    for (const answer of [undefined, new Error('connection refused')]) {
      const e = exception(answer);
      expect(
        await expectedNoRecovery({ recoveryExceptions: [e] }, [fsyncError], cluster, 100),
      ).toBeUndefined();
      expect(e.asked).toBe(1);
    }
  });

  it('explains nothing for a system that declares no exception', async () => {
    expect(await expectedNoRecovery({}, [fsyncError], cluster, 100)).toBeUndefined();
  });
});
