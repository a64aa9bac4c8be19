import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import { KVRAFT_BUG_NEEDS } from '../../../../src/systems/kvraft/bugs.js';
import { mallory, type Sandbox, sandbox, disposeSandbox, jsonOf } from '../../../e2e/helpers.js';

// Each bug switch with its scripted fault schedule through `mallory run --schedule`: the
// campaign's checks catch the bug (campaign.test.ts), and the same schedule with the switch off is
// clean (campaign-clean.test.ts): two files, so the suite can run the halves side by side.

const SCHEDULES = join(import.meta.dirname, '..', 'schedules');

interface Summary {
  readonly runDir: string;
  readonly status: string;
  readonly bugs: readonly { kind: string; name: string; message: string }[];
  readonly ops: { ok: number };
  readonly verdict: {
    readonly checkers: readonly { checker: string; valid: number; invalid: number; unknown: number }[];
  };
}

async function run(
  boxes: Sandbox[],
  schedule: string,
  steps: number,
  nodes: number,
  workload: string,
  bug?: string,
): Promise<{ code: number | null; summary: Summary }> {
  const box = sandbox();
  boxes.push(box);
  const args = ['run', '--time', '5m', '--seed', '7', '--steps', `${steps}`, '--nodes', `${nodes}`];
  args.push('--workload', workload);
  args.push('--store', box.store, '--json');
  args.push('--schedule', join(SCHEDULES, `${schedule}.jsonl`));
  if (bug) args.push('--bug', bug);
  const r = await mallory(args, box, 120_000);
  return { code: r.code, summary: jsonOf(r) as Summary };
}

const CASES = [
  { bug: 'stale-read', steps: 8, workload: 'register', names: ['linearizability'] },
  { bug: 'ack-before-commit', steps: 6, workload: 'register', names: ['linearizability'] },
  { bug: 'vote-without-log-check', steps: 9, workload: 'register', names: ['crash'] },
  // Triggered by observed events (become-leader); five attempts, each fails now and then (a race
  // of two election timeouts against two process starts, which no schedule can fix: the bug is a
  // vote persisted too late, visible only when a crash lands inside that window). Locally a run
  // finds it in 4 of 4; a CI run on a fresh machine once found it in none of the five. A retry is
  // the honest form here: the case asserts that the schedule can expose the bug, and a run that
  // misses it is a run whose timing did not line up, not a pass of a broken check (the switch-off
  // run, with the same schedule, must still be clean every time).
  {
    bug: 'lazy-vote',
    steps: 12,
    workload: 'register',
    names: ['invariant/election-safety'],
    retry: 2,
  },
  // The schedule leaves the cluster without a leader for part of its 15 s, with the switch off as
  // well: the adapter retries the member removal on the majority side's leader, which appends the
  // new configuration (four members, two of them across the cut) and so has no quorum until the heal
  // (Raft's rule: a configuration takes effect when appended). When that retry lands varies, and so
  // does the ok count: 557 on a quiet host, 498 and 454 in CI runs. The floor asks for a cluster
  // that served before and after; the recovery check (asserted for every case) says it served again.
  {
    bug: 'snapshot-uncommitted-config',
    steps: 6,
    workload: 'register',
    names: ['crash/crash-text'],
    minOk: 250,
  },
  { bug: 'split-txn', steps: 6, workload: 'list-append', names: ['txn/not-strict-serializable'] },
  // The same switch under write/read transactions (fractured reads: G1b, G-single, internal).
  { bug: 'split-txn', steps: 6, workload: 'rw-register', names: ['txn/not-strict-serializable'] },
  // And under the bank: a read or a transfer split into parts sees, or writes over, half a transfer.
  { bug: 'split-txn', steps: 6, workload: 'bank', names: ['bank/wrong-total'] },
  // Every node loses its unfsynced writes (the FUSE disk layer), twice: kvraft declares its writes
  // survive that, so the loss breaks its durability contract.
  {
    bug: 'ack-before-fsync',
    steps: 5,
    workload: 'register',
    names: ['durability/broken-contract'],
  },
  // A deep switch: the leader cut off for 2 s, five times; the heal lands before its clients'
  // writes time out, and it answers them with the results of the new leader's entries. Whether a
  // client write is in flight on the old leader at a cut is timing: `npx tsx
  // bench/kvraft-schedules.ts 3 ack-overwritten-entry` found it 3/3 (clean 3/3 without the switch),
  // and a CI run under load once found it in none of one try; a retry is allowed, as above.
  { bug: 'ack-overwritten-entry', steps: 10, workload: 'register', names: ['linearizability'], retry: 2 },
] as const;

/**
 * Every switch's schedule with the switch on (`exposed`: the schedule exposes it and the checks
 * catch it) or off (`clean`: the same schedule finds nothing).
 */
export function describeBugSchedules(side: 'exposed' | 'clean'): void {
  const suite =
    side === 'exposed'
      ? 'kvraft bug switches under scripted schedules (mallory run)'
      : 'kvraft bug schedules with the switches off (mallory run)';
  describe(suite, () => {
    const boxes: Sandbox[] = [];
    afterEach(() => {
      for (const b of boxes.splice(0)) disposeSandbox(b);
    });
    for (const c of CASES) {
      const title = c.workload === 'register' ? c.bug : `${c.bug} (${c.workload})`;
      const retry = 'retry' in c ? c.retry : 0;
      const { nodes } = KVRAFT_BUG_NEEDS[c.bug];
      if (side === 'exposed') {
        it(`${title}: the schedule exposes it and the checks catch it`, { retry }, async () => {
          const { code, summary } = await run(boxes, c.bug, c.steps, nodes, c.workload, c.bug);
          expect(summary.status).toBe('complete');
          expect(code).toBe(1);
          const found = new Set(summary.bugs.flatMap((b) => [b.kind, `${b.kind}/${b.name}`]));
          for (const name of c.names) expect(found).toContain(name);
          // The bug keeps the schedule it was found with, to run again.
          expect(readFileSync(join(summary.runDir, 'bugs', '1', 'source-schedule.jsonl'), 'utf8')).toBe(
            readFileSync(join(SCHEDULES, `${c.bug}.jsonl`), 'utf8'),
          );
          if (c.workload === 'bank') {
            const evidence = JSON.parse(
              readFileSync(join(summary.runDir, 'bugs', '1', 'evidence.json'), 'utf8'),
            ) as { counts: Record<string, number> };
            expect(evidence.counts['wrong-total']).toBeGreaterThan(0);
          } else if (c.workload !== 'register') {
            // A transactional finding comes with the checker's page and its report as evidence.
            const bugDir = join(summary.runDir, 'bugs', '1');
            expect(readFileSync(join(bugDir, 'check.html'), 'utf8')).toContain('not strict-serializable');
            const evidence = JSON.parse(readFileSync(join(bugDir, 'evidence.json'), 'utf8')) as {
              valid: boolean;
            };
            expect(evidence.valid).toBe(false);
          }
        });
      } else {
        it(`${title}: the same schedule with the switch off is clean`, async () => {
          const { code, summary } = await run(boxes, c.bug, c.steps, nodes, c.workload);
          expect(summary.status).toBe('complete');
          expect(summary.bugs).toEqual([]);
          expect(summary.ops.ok).toBeGreaterThan('minOk' in c ? c.minOk : 500);
          expect(code).toBe(0);
          // Once the faults stopped, the cluster served again.
          const recovery = summary.verdict.checkers.find((k) => k.checker === 'recovery');
          expect(recovery).toMatchObject({ valid: 1, invalid: 0, unknown: 0 });
          // The probe events and the node logs are in the run directory.
          for (const node of ['n1', 'n2', 'n3'].slice(0, nodes)) {
            const dir = join(summary.runDir, 'nodes', node);
            expect(readFileSync(join(dir, 'probe.jsonl'), 'utf8')).toContain('"type":"commit-advance"');
            expect(readFileSync(join(dir, 'stdout.log'), 'utf8')).toContain(`kvraft ${node} started`);
          }
        });
      }
    }
  });
}
