import { describe, expect, it } from 'vitest';

import { disksLostBeyondContract, expectedNoRecovery } from '../../src/campaign/recovery-exceptions.js';
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

describe('disksLostBeyondContract', () => {
  const killN2 = { atMs: 1000, f: 'kill' as const, value: 'one' as const, nodes: ['n2'] };
  const full = { atMs: 500, f: 'disk-full' as const, value: 'all' as const, nodes: ['n1', 'n2', 'n3'] };
  const lose = { atMs: 2000, f: 'lose-unfsynced' as const, value: 'all' as const, nodes: ['n1', 'n2', 'n3'] };
  const system = { level: 'process-crash' as const, statedBy: 'system' as const };

  it('names the losses beyond the declared durability (a kill while the disk refused writes too)', () => {
    expect(disksLostBeyondContract(system, 'redis', [full, killN2], 3)?.words).toBe(
      'after disk losses beyond what redis declares it survives (process-crash: kill n2 at 1.0 s while disk-full refused its writes dropped writes the disk had not taken, and the contract is only that writes survive a process crash)',
    );
    expect(disksLostBeyondContract(system, 'redis', [lose], 3)?.evidence).toMatchObject({
      level: 'process-crash',
      withinContract: false,
    });
  });

  it('leaves a no-recovery a finding with no contract, no disk loss, or losses within the contract', () => {
    expect(disksLostBeyondContract(undefined, 's', [lose], 3)).toBeUndefined();
    expect(disksLostBeyondContract(system, 's', [killN2], 3)).toBeUndefined();
    expect(disksLostBeyondContract({ level: 'disk-loss', statedBy: 'user' }, 's', [lose], 3)).toBeUndefined();
    expect(
      disksLostBeyondContract(
        { level: 'minority-disk-loss', statedBy: 'system' },
        's',
        [{ ...lose, nodes: ['n1'] }],
        3,
      ),
    ).toBeUndefined();
  });
});
