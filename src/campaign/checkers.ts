import { exactJson } from '../core/exact-json.js';
import { type DurabilityContract, durabilityContract, judgeDurability } from '../check/durability.js';
import { diskLossTimesNs, withRollbacks } from '../check/disk-rollback.js';
import {
  type SplitBrain,
  type SplitBrainHolds,
  judgeFailoverLoss,
  oldLeaderOpsIn,
  splitBrains,
} from '../check/failover-loss.js';
import { canonicalKey } from '../check/models/value.js';
import {
  anomalyWords,
  explainRegisterResult,
  type KeyExplanation,
  type RegisterAnomaly,
} from '../check/explain-register.js';
import { BANK_ERROR_TYPES, checkBank } from '../check/check-bank.js';
import { checkCounter } from '../check/check-counter.js';
import { checkSet, type SetAnomaly, type SetAnomalyType } from '../check/check-set.js';
import { checkInvariants } from '../check/invariants.js';
import { MAX_COUNTEREXAMPLES, checkOps, type LinearizabilityResult } from '../check/linearizable.js';
import { renderLinearizabilityHtml } from '../check/linearizable-html.js';
import { HistoryError } from '../check/history/history-error.js';
import { checkListAppend } from '../check/txn/check-list-append.js';
import { checkRwRegister } from '../check/txn/check-rw-register.js';
import { DEFAULT_CONSISTENCY, anomaliesForbiddenBy } from '../check/txn/consistency-model.js';
import { renderTxnHtml } from '../check/txn/txn-html.js';
import { txnReport } from '../check/txn/txn-report.js';
import type { Op } from '../core/op.js';
import type { TxnWorkloadName } from '../systems/system.js';
import type { LoadedWorkload } from '../workload/load-workload.js';
import type { WorkloadDefinition, WorkloadName } from '../workload/workload.js';
import type { WorkloadVerdict } from '../workload/workload-checker.js';
import { BANK_DEFAULTS } from '../workload/bank.js';
import type { Finding, ScheduleCheckInput, ScheduleChecker } from './checker.js';
import { nemesisGrudges } from './_internals/nemesis-grudges.js';
import { describeBytes } from '../core/memory-limit.js';
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
      const reads = input.system.readConsistency ?? 'linearizable';
      const result = await checkOps(clientOps, { model: 'kv', timeLimitMs, reads });
      if (result.valid === 'unknown') {
        return [
          {
            kind: 'linearizability',
            name: 'unknown',
            severity: 'note',
            unknown: true,
            message: `linearizability of ${result.ops} ops over ${result.partitions} key(s) could not be decided within ${
              result.unknownBecause === 'memory' && result.memoryLimitBytes !== undefined
                ? `the memory limit of ${describeBytes(result.memoryLimitBytes)}`
                : `the ${timeLimitMs / 1000} s time limit`
            }`,
            evidence: { result, reads },
          },
        ];
      }
      if (result.valid) return [];
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
      const declared = reads === 'sequential' ? ' (reads checked as sequential, as the system declares)' : '';
      const message =
        first !== undefined && first.anomaly !== 'unexplained'
          ? `key ${keyName(ce?.key)}: ${anomalyWords(first.anomaly)}: ${first.message}${others}${declared}`
          : `history of key ${keyName(ce?.key)} is not linearizable: ${failing} cannot be placed after state ${ce?.stateBefore ?? '?'}${others}${declared}`;
      const rolledBack = await rollbackHolds(input, explanations, clientOps, nemesisOps, timeLimitMs, reads);
      const lostData = (e: KeyExplanation): boolean =>
        DATA_LOSS_ANOMALIES.has(e.anomaly) || (e.key !== undefined && rolledBack.has(String(e.key)));
      const rollbackEvidence = rolledBack.size > 0 ? { rolledBack: [...rolledBack] } : {};
      const rollbackWords =
        rolledBack.size > 0
          ? ` (key(s) ${[...rolledBack].join(', ')}: linearizable if state went back to an earlier value after the disk losses)`
          : '';
      const durability = durabilityFinding(
        input,
        explanations.length > 0 && explanations.every(lostData),
        `${message}${rollbackWords}`,
      );
      if (durability?.severity === 'note')
        return [
          {
            ...durability,
            message: `${durability.message}${rollbackWords}`,
            evidence: { ...(durability.evidence as object), ...rollbackEvidence, result },
          },
        ];
      const holds = await splitBrainHolds(input, explanations, clientOps, timeLimitMs, reads);
      const failover = failoverNote(input, result, explanations, clientOps, message, holds, lostData);
      if (failover !== undefined) return [failover];
      return [
        {
          kind: durability?.kind ?? 'linearizability',
          name: durability?.name ?? 'not-linearizable',
          message: durability?.message ?? message,
          evidence: {
            result,
            reads,
            key: ce?.key,
            ...(first !== undefined ? { anomaly: first.anomaly } : {}),
            explanations,
            ops: ce ? clientOps.filter((op) => (op.value as unknown[])[0] === ce.key) : [],
            // The contract it broke: its level, who stated it, and the disk losses.
            ...(durability !== undefined ? { contract: durability.evidence } : {}),
            ...rollbackEvidence,
          },
          html: renderLinearizabilityHtml(result, clientOps, nemesisOps, {
            title: `schedule ${input.schedule + 1}: key ${keyName(ce?.key)} is not linearizable`,
            grudges: nemesisGrudges(nemesisOps, input.faults),
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

/** Register anomalies a loss of written data shows as. */
const DATA_LOSS_ANOMALIES: ReadonlySet<RegisterAnomaly> = new Set([
  'lost-write',
  'resurrected',
  'stale-read',
]);

/** The durability a schedule is checked against: the user's (`--durability`), else the system's declaration. */
function contractOf(input: ScheduleCheckInput): DurabilityContract | undefined {
  return durabilityContract(input.durability, input.system.durability);
}

/**
 * Against a system's declared durability: a violation that is all lost data (`dataLoss`: lost
 * writes, values brought back, old values read, elements gone from a set) in a schedule whose
 * disks lost unfsynced writes within the contract breaks it; beyond the contract, it is what the
 * system declared can happen — a note. Undefined: judge it as the workload's own violation (no
 * declaration, no disk lost data, or anomalies data loss does not explain).
 */
function durabilityFinding(
  input: ScheduleCheckInput,
  dataLoss: boolean,
  message: string,
): Pick<Finding, 'kind' | 'name' | 'message' | 'severity' | 'evidence'> | undefined {
  const contract = contractOf(input);
  if (contract === undefined || !dataLoss) return undefined;
  const declared = contract.level;
  const verdict = judgeDurability(declared, input.faults, input.nodeCount, input.deathsWhileWritesRefused);
  if (verdict === undefined) return undefined;
  const faults = verdict.dataLossFaults.join('; ');
  const promise =
    contract.statedBy === 'system'
      ? `${input.system.name} declares they survive ${declared}`
      : `the run checks that they survive ${declared} (--durability${input.system.durability !== undefined ? `; ${input.system.name} declares ${input.system.durability}` : ''})`;
  const evidence = { durability: declared, statedBy: contract.statedBy, ...verdict };
  if (verdict.withinContract) {
    return {
      kind: 'durability',
      name: 'broken-contract',
      message: `acknowledged writes lost although ${promise} (disks lost unfsynced writes: ${faults}): ${message}`,
      evidence,
    };
  }
  return {
    kind: 'durability',
    name: 'beyond-contract',
    severity: 'note',
    message: `writes lost beyond what ${contract.statedBy === 'system' ? `${input.system.name} declares they survive` : 'the run checks (--durability)'} (${declared}): ${verdict.beyond ?? ''}`,
    evidence,
  };
}

/**
 * A register violation the system's declared failover loss allows (`SystemAdapter.failoverLoss`):
 * every violating key lost data across a leader change the run saw (`judgeFailoverLoss`) — a note
 * that says so, with the changes and the ops, never a bug. Undefined (a finding) when the system
 * declares nothing, or any key is not explained so, or the check may not have named every key.
 */
function failoverNote(
  input: ScheduleCheckInput,
  result: LinearizabilityResult,
  explanations: readonly KeyExplanation[],
  clientOps: readonly Op[],
  message: string,
  holds: SplitBrainHolds,
  lostData: (e: KeyExplanation) => boolean,
): Finding | undefined {
  const declared = input.system.failoverLoss;
  if (declared === undefined) return undefined;
  const counterexamples = result.counterexamples ?? [];
  // A capped list of violating keys, or keys left undecided, may hide a key no failover explains.
  if (counterexamples.length >= MAX_COUNTEREXAMPLES || (result.undecidedPartitions ?? 0) > 0)
    return undefined;
  if (explanations.length !== counterexamples.length) return undefined;
  // Keys whose data a disk lost beyond the declared durability are that contract's (a note of
  // their own); the others must each be a declared failover loss.
  const beyond = beyondDurability(input);
  const lostOnDisk = beyond === undefined ? [] : explanations.filter(lostData);
  const rest = explanations.filter((e) => !lostOnDisk.includes(e));
  const verdict = judgeFailoverLoss(rest, clientOps, input.leaderChanges ?? [], declared, holds);
  if (verdict === undefined) return undefined;
  const s = (ns: number): string => (Number.isFinite(ns) ? `${(ns / NS_PER_S).toFixed(3)} s` : 'the end');
  const changes = verdict.keys
    .map((k) =>
      k.splitBrain !== undefined
        ? `split brain: ${k.splitBrain.old} and ${k.splitBrain.promoted} both led from ${s(k.splitBrain.fromNs)} to ${s(k.splitBrain.toNs)}${
            k.oldLeaderOps !== undefined
              ? `, key ${exactJson(k.key)} linearizable without the ${k.oldLeaderOps} op(s) ${k.splitBrain.old} served then`
              : ''
          }`
        : k.changes.map((c) => `${c.type} on ${c.node} at ${s(c.timeNs)}`).join(', '),
    )
    .filter((text, i, all) => all.indexOf(text) === i)
    .join('; ');
  return {
    kind: 'durability',
    name: 'failover-loss',
    severity: 'note',
    message: `allowed by the declared durability: ${input.system.name} declares that a change of leader may lose acknowledged writes (${declared.why}), and the leader changed while the ops of every violating key ran (${changes})${
      lostOnDisk.length > 0
        ? `; ${lostOnDisk.length} other key(s) lost data after disks lost writes beyond what ${input.system.name} declares they survive (${beyond?.level ?? ''}: ${beyond?.faults ?? ''})`
        : ''
    }: ${message}`,
    evidence: {
      failoverLoss: declared,
      ...verdict,
      ...(lostOnDisk.length > 0
        ? { beyondDurability: beyond, keysLostOnDisk: lostOnDisk.map((e) => e.key) }
        : {}),
      result,
      explanations,
    },
  };
}

/**
 * The disk losses of the schedule when they went beyond the durability the system declares (or
 * the run checks): what it declared can lose data. Undefined when no disk lost data, or the losses
 * stayed within the contract (a loss then breaks it), or nothing is declared.
 */
function beyondDurability(input: ScheduleCheckInput): { level: string; faults: string } | undefined {
  const level = contractOf(input)?.level;
  if (level === undefined) return undefined;
  const verdict = judgeDurability(level, input.faults, input.nodeCount, input.deathsWhileWritesRefused);
  if (verdict === undefined || verdict.withinContract) return undefined;
  return { level, faults: verdict.dataLossFaults.join('; ') };
}

/**
 * For each violating key whose ops overlap a split brain the system declares and the run saw: the
 * split brain whose old leader's ops, taken out, leave the key's history linearizable (checked
 * again with the same model and reads). A split brain's loser serves its own copy of the data and
 * gives it up when it converges, so what it acknowledged or read then says nothing about the
 * register the cluster kept; every other op must still fit.
 */
async function splitBrainHolds(
  input: ScheduleCheckInput,
  explanations: readonly KeyExplanation[],
  clientOps: readonly Op[],
  timeLimitMs: number,
  reads: 'linearizable' | 'sequential',
): Promise<SplitBrainHolds> {
  const holds = new Map<string, { brain: SplitBrain; removed: number }>();
  const declared = input.system.failoverLoss;
  if (declared?.splitBrain === undefined) return holds;
  const brains = splitBrains(input.leaderChanges ?? [], declared);
  if (brains.length === 0) return holds;
  for (const e of explanations) {
    if (e.key === undefined) continue;
    const keyOps = clientOps.filter(
      (op) => Array.isArray(op.value) && op.value.length === 2 && canonicalKey(op.value[0]) === e.key,
    );
    for (const brain of brains) {
      const removed = oldLeaderOpsIn(keyOps, brain);
      if (removed.size === 0) continue;
      const kept = keyOps.filter((op) => !removed.has(op.index));
      const again = await checkOps(kept, { model: 'kv', timeLimitMs, reads });
      if (again.valid !== true) continue;
      const invocations = keyOps.filter((op) => op.type === 'invoke' && removed.has(op.index)).length;
      holds.set(String(e.key), { brain, removed: invocations });
      break;
    }
  }
  return holds;
}

/**
 * The violating keys, among those whose anomaly is not already a loss of data, whose history is
 * linearizable once state may go back to an earlier value after each disk loss of the schedule
 * (`withRollbacks`; checked again with the same model and reads). A node that lost written data
 * from its disk comes back with an older copy and may serve it; the register explanation knows
 * lost writes, stale reads and resurrected values, and this covers the rest (a cas on the older
 * copy). Empty when no disk lost data. The durability contract judges these keys as data lost.
 */
async function rollbackHolds(
  input: ScheduleCheckInput,
  explanations: readonly KeyExplanation[],
  clientOps: readonly Op[],
  nemesisOps: readonly Op[],
  timeLimitMs: number,
  reads: 'linearizable' | 'sequential',
): Promise<Set<string>> {
  const rolledBack = new Set<string>();
  const open = explanations.filter((e) => e.key !== undefined && !DATA_LOSS_ANOMALIES.has(e.anomaly));
  if (open.length === 0) return rolledBack;
  const lossesNs = diskLossTimesNs(
    nemesisOps,
    input.faults,
    (input.deathsWhileWritesRefused ?? []).map((d) => d.timeNs),
  );
  if (lossesNs.length === 0) return rolledBack;
  for (const e of open) {
    const keyOps = clientOps.filter(
      (op) => Array.isArray(op.value) && op.value.length === 2 && canonicalKey(op.value[0]) === e.key,
    );
    const key = keyOps.find((op) => Array.isArray(op.value))?.value as unknown[] | undefined;
    if (key === undefined) continue;
    const again = await checkOps(withRollbacks(keyOps, key[0], lossesNs), {
      model: 'kv',
      timeLimitMs,
      reads,
    });
    if (again.valid === true) rolledBack.add(String(e.key));
  }
  return rolledBack;
}

const NS_PER_S = 1e9;

/** How many anomalies of each type a bug's evidence keeps (its HTML page shows more). */
const ANOMALIES_KEPT_PER_TYPE = 20;

/**
 * The transactional history of each schedule (`list-append` or `rw-register`) must show no
 * anomaly the system's consistency model forbids (`transactions.consistency`, default strict
 * serializability). A history the checker cannot read (a reply whose micro-ops do not fit) is a
 * finding too: the system answered something no correct one would.
 */
export function transactionalChecker(workload: TxnWorkloadName): ScheduleChecker {
  return {
    name: workload,
    check(input): Promise<Finding[]> {
      const consistency = input.system.transactions?.consistency ?? DEFAULT_CONSISTENCY;
      const clientOps = input.ops.filter((op) => op.process !== 'nemesis');
      const check = workload === 'list-append' ? checkListAppend : checkRwRegister;
      let result;
      try {
        result = check<Op>(clientOps, { model: consistency });
      } catch (error) {
        if (!(error instanceof HistoryError)) throw error;
        const op = error.position === undefined ? undefined : clientOps[error.position];
        return Promise.resolve([
          {
            kind: 'txn',
            name: 'malformed-history',
            message: `the ${workload} history cannot be checked: ${error.message}`,
            evidence: { workload, error: error.message, ...(op === undefined ? {} : { op }) },
          },
        ]);
      }
      if (result.valid) return Promise.resolve([]);
      const report = txnReport(workload, result);
      const forbidden = anomaliesForbiddenBy(consistency);
      const types = report.anomalyTypes.filter((type) => forbidden.has(type));
      const counted = types.map(
        (type) => `${type} ×${report.anomalies.filter((a) => a.type === type).length}`,
      );
      const first = report.anomalies.find((a) => forbidden.has(a.type));
      const title = `schedule ${input.schedule + 1}: not ${consistency}`;
      return Promise.resolve([
        {
          kind: 'txn',
          name: `not-${consistency}`,
          message: `not ${consistency} (${workload}): ${counted.join(', ')}${first === undefined ? '' : `; ${first.explanation}`}`,
          evidence: {
            ...report,
            anomalyCounts: Object.fromEntries(
              report.anomalyTypes.map((type) => [
                type,
                report.anomalies.filter((a) => a.type === type).length,
              ]),
            ),
            anomalies: report.anomalyTypes.flatMap((type) =>
              report.anomalies.filter((a) => a.type === type).slice(0, ANOMALIES_KEPT_PER_TYPE),
            ),
          },
          html: renderTxnHtml(report, { title }),
        },
      ]);
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

/** How many anomalies a set, counter or bank finding's message names, and its evidence keeps. */
const NAMED_IN_MESSAGE = 3;
const KEPT_IN_EVIDENCE = 100;

/** A finding's list of what went wrong: the first few named by their messages, and how many more. */
function named(items: readonly { readonly message: string }[]): string {
  const more = items.length > NAMED_IN_MESSAGE ? ` (and ${items.length - NAMED_IN_MESSAGE} more)` : '';
  return `${items
    .slice(0, NAMED_IN_MESSAGE)
    .map((item) => item.message)
    .join('; ')}${more}`;
}

/** What a finding's evidence keeps of a long list. */
function kept<T>(items: readonly T[]): T[] {
  return items.slice(0, KEPT_IN_EVIDENCE);
}

/** A history that does not fit its workload's checker: the system answered what no correct one would. */
function malformed(kind: 'set' | 'counter' | 'bank', error: unknown): Finding[] {
  const message = error instanceof Error ? error.message : String(error);
  return [
    {
      kind,
      name: 'malformed-history',
      message: `the ${kind} history cannot be checked: ${message}`,
      evidence: { error: message },
    },
  ];
}

const SET_FINDING_NAMES: Readonly<Record<SetAnomalyType, string>> = {
  lost: 'lost-elements',
  unexpected: 'unexpected-elements',
  stale: 'stale-read',
};

/**
 * Each schedule's set history (`--workload set`): no element lost (acknowledged, then missing from
 * every read that began after), none unexpected (read but never added, or its add failed), none
 * read stale (missing from a read, yet in a later one) — stale reads are a note for a system that
 * declares sequential reads. One finding per anomaly type, each naming the elements and the ops.
 */
export function setChecker(): ScheduleChecker {
  return {
    name: 'set',
    check(input): Promise<Finding[]> {
      const clientOps = input.ops.filter((op) => op.process !== 'nemesis');
      let result;
      try {
        result = checkSet(clientOps);
      } catch (error) {
        return Promise.resolve(malformed('set', error));
      }
      const sequential = input.system.readConsistency === 'sequential';
      const findings: Finding[] = [];
      const summary = {
        keys: result.keys,
        attempted: result.attempted,
        acknowledged: result.acknowledged,
        recovered: result.recovered,
        neverRead: result.neverRead,
      };
      const add = (type: SetAnomalyType, anomalies: readonly SetAnomaly[], what: string): void => {
        if (anomalies.length === 0) return;
        const message = `${anomalies.length} ${what} element(s) of ${result.attempted} added: ${named(anomalies)}`;
        const evidence = {
          ...summary,
          type,
          count: anomalies.length,
          elements: kept(anomalies).map((a) => exactJson(a.element)),
          anomalies: kept(anomalies),
        };
        // Elements gone after disks lost unfsynced writes: judged against the durability contract.
        const durability = type === 'lost' ? durabilityFinding(input, true, message) : undefined;
        if (durability !== undefined) {
          findings.push({
            ...durability,
            evidence:
              durability.severity === 'note'
                ? { ...(durability.evidence as object), set: evidence }
                : { ...evidence, contract: durability.evidence },
          });
          return;
        }
        findings.push({
          kind: 'set',
          name: SET_FINDING_NAMES[type],
          ...(type === 'stale' && sequential ? { severity: 'note' as const } : {}),
          message,
          evidence,
        });
      };
      add('lost', result.lost, 'lost');
      add('unexpected', result.unexpected, 'unexpected');
      add(
        'stale',
        result.stale,
        sequential ? 'stale (reads are sequential, as the system declares)' : 'stale',
      );
      return Promise.resolve(findings);
    },
  };
}

/**
 * Each schedule's counter history (`--workload counter`): every read lies between the sum of the
 * adds acknowledged before it began and the sum of the adds that may have happened by its end.
 */
export function counterChecker(): ScheduleChecker {
  return {
    name: 'counter',
    check(input): Promise<Finding[]> {
      const clientOps = input.ops.filter((op) => op.process !== 'nemesis');
      let result;
      try {
        result = checkCounter(clientOps);
      } catch (error) {
        return Promise.resolve(malformed('counter', error));
      }
      if (result.valid) return Promise.resolve([]);
      const { violations } = result;
      return Promise.resolve([
        {
          kind: 'counter',
          name: 'read-out-of-bounds',
          message: `${violations.length} of ${result.reads} counter reads out of bounds: ${named(violations)}`,
          evidence: {
            keys: result.keys,
            adds: result.adds,
            reads: result.reads,
            count: violations.length,
            violations: kept(violations),
          },
        },
      ]);
    },
  };
}

/**
 * A workload's own checker (`check` on its definition) on each schedule's client ops: a verdict
 * `valid: false` is a bug `workload/<name>` (the verdict's name, else the workload's), `'unknown'`
 * a note. A checker that throws ends the run, naming the workload: that is its fault, not the
 * system's.
 */
export function workloadChecker(definition: WorkloadDefinition): ScheduleChecker {
  const check = definition.check;
  if (check === undefined) throw new Error(`workload ${definition.name} has no check`);
  return {
    name: definition.name,
    async check(input): Promise<Finding[]> {
      const clientOps = input.ops.filter((op) => op.process !== 'nemesis');
      const faults = input.ops.filter((op) => op.process === 'nemesis');
      let verdict;
      try {
        verdict = await check(clientOps, { schedule: input.schedule, system: input.system, faults });
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        throw new Error(`the check of workload ${definition.name} threw: ${message}`, { cause: error });
      }
      if (!isVerdict(verdict)) {
        throw new Error(
          `the check of workload ${definition.name} returned ${verdict === undefined ? 'nothing' : JSON.stringify(verdict)}, not a verdict {valid: true | false | 'unknown', message?}`,
        );
      }
      if (verdict.valid === true) return [];
      const name = verdict.name ?? definition.name;
      if (verdict.valid === 'unknown') {
        return [
          {
            kind: 'workload',
            name,
            severity: 'note',
            unknown: true,
            message: `the check of workload ${definition.name} could not tell: ${verdict.message ?? 'no reason given'}`,
            evidence: verdict.evidence ?? null,
          },
        ];
      }
      return [
        {
          kind: 'workload',
          name,
          message: verdict.message ?? `the check of workload ${definition.name} found the history invalid`,
          evidence: verdict.evidence ?? null,
        },
      ];
    },
  };
}

/** What a read gone wrong is called in a finding's message. */
const BANK_ERROR_WORDS: Readonly<Record<(typeof BANK_ERROR_TYPES)[number], string>> = {
  'unexpected-key': 'read an account the bank does not have',
  'nil-balance': 'missed an account',
  'wrong-total': 'saw the wrong total',
  'negative-value': 'saw a negative balance',
};

/**
 * Each schedule's bank history (`--workload bank`, Jepsen's bank checker): every acknowledged read
 * holds every account and no other, with balances that sum to the bank's total and are never
 * negative. One finding per kind of error, naming the first reads that show it, with the counts.
 */
export function bankChecker(): ScheduleChecker {
  const accounts = Array.from({ length: BANK_DEFAULTS.accounts }, (_, i) => i);
  const total = BANK_DEFAULTS.total;
  return {
    name: 'bank',
    check(input): Promise<Finding[]> {
      const clientOps = input.ops.filter((op) => op.process !== 'nemesis');
      let result;
      try {
        result = checkBank(clientOps, { accounts, total });
      } catch (error) {
        return Promise.resolve(malformed('bank', error));
      }
      const findings: Finding[] = [];
      for (const type of BANK_ERROR_TYPES) {
        const errors = result.errors.filter((e) => e.type === type);
        if (errors.length === 0) continue;
        findings.push({
          kind: 'bank',
          name: type,
          message: `${errors.length} of ${result.reads} bank reads ${BANK_ERROR_WORDS[type]} (total ${total} over ${accounts.length} accounts): ${named(errors)}`,
          evidence: {
            type,
            accounts: accounts.length,
            total,
            reads: result.reads,
            transfers: result.transfers,
            counts: result.counts,
            count: errors.length,
            errors: kept(errors),
          },
        });
      }
      return Promise.resolve(findings);
    },
  };
}

function isVerdict(v: unknown): v is WorkloadVerdict {
  if (typeof v !== 'object' || v === null) return false;
  const { valid, message, name } = v as Record<string, unknown>;
  return (
    (valid === true || valid === false || valid === 'unknown') &&
    (message === undefined || typeof message === 'string') &&
    (name === undefined || (typeof name === 'string' && name !== ''))
  );
}

/**
 * The checker of each built-in workload's histories (a built-in's checks give findings of their own
 * kinds, several per schedule, so they are checkers rather than a definition's `check`); every
 * built-in must have one.
 */
const BUILTIN_CHECKERS: Readonly<Record<WorkloadName, (config: RunConfig) => ScheduleChecker>> = {
  register: (config) => linearizabilityChecker(config.checkTimeLimitMs),
  'list-append': () => transactionalChecker('list-append'),
  'rw-register': () => transactionalChecker('rw-register'),
  set: () => setChecker(),
  counter: () => counterChecker(),
  bank: () => bankChecker(),
};

/** The checker of a workload's histories: its own `check`, or a built-in's. */
function historyChecker(config: RunConfig, workload: LoadedWorkload): ScheduleChecker {
  if (!workload.builtIn || workload.definition.check !== undefined)
    return workloadChecker(workload.definition);
  return BUILTIN_CHECKERS[workload.definition.name as WorkloadName](config);
}

/** The checks every campaign runs on each schedule (beyond the log and recovery checks). */
export function defaultCheckers(config: RunConfig, workload: LoadedWorkload): ScheduleChecker[] {
  return [historyChecker(config, workload), invariantChecker()];
}
