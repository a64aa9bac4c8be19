import { checkInvariants } from '../check/invariants.js';
import { checkOps } from '../check/linearizable.js';
import { renderLinearizabilityHtml } from '../check/linearizable-html.js';
import type { Finding, ScheduleChecker } from './checker.js';
import type { RunConfig } from './config.js';

/** The key-value register history of each schedule must be linearizable (checked per key). */
export function linearizabilityChecker(timeLimitMs: number): ScheduleChecker {
  return {
    name: 'linearizable',
    async check(input): Promise<Finding[]> {
      const clientOps = input.ops.filter((op) => op.process !== 'nemesis');
      const nemesisOps = input.ops.filter((op) => op.process === 'nemesis');
      const result = await checkOps(clientOps, { model: 'kv', timeLimitMs });
      if (result.valid !== false) return [];
      const ce = result.counterexample;
      const failing = ce
        ? `${ce.failingOp.f} ${JSON.stringify(ce.failingOp.value)} by process ${String(ce.failingOp.process)}`
        : '';
      return [
        {
          kind: 'linearizability',
          name: 'not-linearizable',
          message: `history of key ${String(ce?.key ?? '?')} is not linearizable: ${failing} cannot be placed after state ${ce?.stateBefore ?? '?'}`,
          evidence: {
            result,
            key: ce?.key,
            ops: ce ? clientOps.filter((op) => (op.value as unknown[])[0] === ce.key) : [],
          },
          html: renderLinearizabilityHtml(result, clientOps, nemesisOps, {
            title: `schedule ${input.schedule + 1}: key ${String(ce?.key ?? '?')} is not linearizable`,
          }),
        },
      ];
    },
  };
}

/** Raft safety over the schedule's probe events (two leaders in a term, a vote given twice, …). */
export function invariantChecker(): ScheduleChecker {
  return {
    name: 'invariants',
    check(input): Promise<Finding[]> {
      return Promise.resolve(
        checkInvariants(input.events).map((v) => ({
          kind: 'invariant' as const,
          name: v.name,
          message: v.message,
          evidence: { events: v.events },
        })),
      );
    },
  };
}

/** The checks every campaign runs on each schedule (beyond the log and recovery checks). */
export function defaultCheckers(config: RunConfig): ScheduleChecker[] {
  return [linearizabilityChecker(config.checkTimeLimitMs), invariantChecker()];
}
