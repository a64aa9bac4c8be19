import { exactJson } from '../check/_internals/exact-json.js';
import { anomalyWords, explainRegisterResult } from '../check/explain-register.js';
import { checkInvariants } from '../check/invariants.js';
import { checkOps } from '../check/linearizable.js';
import { renderLinearizabilityHtml } from '../check/linearizable-html.js';
import type { Finding, ScheduleChecker } from './checker.js';
import type { RunConfig } from './config.js';

/** How many of the other violating keys a message names (the evidence lists them all). */
const MORE_KEYS_NAMED = 5;

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
        ? `${ce.failingOp.f} ${exactJson(ce.failingOp.value)} by process ${String(ce.failingOp.process)}`
        : '';
      const explanations = explainRegisterResult(result, clientOps);
      const [first, ...more] = explanations;
      const keyName = (key: unknown): string => (key === undefined ? '?' : exactJson(key));
      const others =
        more.length === 0
          ? ''
          : ` (and ${more.length} more key(s): ${more
              .slice(0, MORE_KEYS_NAMED)
              .map((e) => `${keyName(e.key)} ${anomalyWords(e.anomaly)}`)
              .join(', ')}${more.length > MORE_KEYS_NAMED ? ', …' : ''})`;
      const message =
        first !== undefined && first.anomaly !== 'unexplained'
          ? `key ${keyName(ce?.key)}: ${anomalyWords(first.anomaly)}: ${first.message}${others}`
          : `history of key ${keyName(ce?.key)} is not linearizable: ${failing} cannot be placed after state ${ce?.stateBefore ?? '?'}${others}`;
      return [
        {
          kind: 'linearizability',
          name: 'not-linearizable',
          message,
          evidence: {
            result,
            key: ce?.key,
            ...(first !== undefined ? { anomaly: first.anomaly } : {}),
            explanations,
            ops: ce ? clientOps.filter((op) => (op.value as unknown[])[0] === ce.key) : [],
          },
          html: renderLinearizabilityHtml(result, clientOps, nemesisOps, {
            title: `schedule ${input.schedule + 1}: key ${keyName(ce?.key)} is not linearizable`,
            explanations: explanations.map(
              (e) =>
                `${e.key === undefined ? '' : `key ${keyName(e.key)}: `}${anomalyWords(e.anomaly)}: ${e.message}`,
            ),
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
