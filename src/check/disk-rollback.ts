import { DISK_LOSS_FAULTS, type EnactedFault, killsWhileWritesRefused } from './durability.js';
import { canonicalKey } from './models/value.js';
import type { Op } from '../core/op.js';

/**
 * How many of the latest distinct values written before a loss a rollback may return to (besides
 * the key's initial value). Each is an op the search may place anywhere after the loss, so the
 * search grows with them; a rollback to an older value stays unexplained, a finding.
 */
export const MAX_ROLLBACK_VALUES = 8;
/** Process ids of the rollback writes: far above any client's. */
const ROLLBACK_PROCESS_BASE = 1_000_000_000;

/** The value a write or cas of a key-value op sets, if it is one. */
function valueSet(op: Op): { set: true; value: unknown } | undefined {
  if (!Array.isArray(op.value) || op.value.length !== 2) return undefined;
  if (op.f === 'write') return { set: true, value: op.value[1] };
  if (op.f === 'cas' && Array.isArray(op.value[1]) && op.value[1].length === 2)
    return { set: true, value: op.value[1][1] };
  return undefined;
}

/**
 * A key's ops (key-value register ops, `[key, v]`, in history order) with the rollbacks that disk
 * losses at `lossesNs` allow: a node that lost written data from its disk may come back holding a
 * value the key held before, and serve it. For each loss, the key's initial value and the last
 * `MAX_ROLLBACK_VALUES` distinct values written before it (invoked, and not failed) become writes invoked at the
 * loss that never complete (Jepsen's `:info`): each may take effect once, at any time after, or
 * never. When the key's history is linearizable with them, its violation is state going back to
 * an earlier value: what a disk loss does.
 */
export function withRollbacks(
  keyOps: readonly Op[],
  key: unknown,
  lossesNs: readonly number[],
  initial: unknown = null,
): Op[] {
  // A write that failed never took effect: no copy of the key ever held its value.
  const failed = new Set<Op>();
  const open = new Map<Op['process'], Op>();
  for (const op of keyOps) {
    if (op.type === 'invoke') open.set(op.process, op);
    else {
      const invoke = open.get(op.process);
      if (invoke !== undefined && op.type === 'fail') failed.add(invoke);
      open.delete(op.process);
    }
  }
  const added: Op[] = [];
  let process = ROLLBACK_PROCESS_BASE;
  for (const lossNs of [...lossesNs].sort((a, b) => a - b)) {
    const values = new Map<string | number | bigint, unknown>([[canonicalKey(initial), initial]]);
    const written = keyOps
      .filter((op) => op.type === 'invoke' && op.time < lossNs && !failed.has(op))
      .map(valueSet);
    for (let i = written.length - 1; i >= 0 && values.size <= MAX_ROLLBACK_VALUES; i--) {
      const w = written[i];
      if (w !== undefined && !values.has(canonicalKey(w.value))) values.set(canonicalKey(w.value), w.value);
    }
    for (const value of values.values())
      added.push({
        index: -1,
        time: lossNs,
        type: 'invoke',
        process: process++,
        f: 'write',
        value: [key, value],
      });
  }
  // In history order: each rollback write goes in after the ops invoked or completed before it.
  const out: Op[] = [];
  let next = 0;
  for (const op of keyOps) {
    while (next < added.length && added[next].time <= op.time) out.push(added[next++]);
    out.push(op);
  }
  out.push(...added.slice(next));
  return out;
}

/**
 * When the disk losses of a schedule took effect, from its nemesis ops (ns, as op times): the end
 * of each fault that drops written data (`DISK_LOSS_FAULTS`; and every kill, when one fell on a
 * node whose disk refused writes) and `deathsNs`, when nodes died by themselves while their disk
 * refused writes. A fault is recorded when it starts and when it is done; a node
 * serves what it lost only after that.
 */
export function diskLossTimesNs(
  nemesisOps: readonly Op[],
  faults: readonly EnactedFault[],
  deathsNs: readonly number[] = [],
): number[] {
  const losing = new Set(DISK_LOSS_FAULTS);
  if (killsWhileWritesRefused(faults).length > 0) losing.add('kill');
  const started = new Map<string, number>();
  const times: number[] = [];
  for (const op of nemesisOps) {
    // A fault skipped (nothing to act on) is one record, and dropped nothing.
    if (op.process !== 'nemesis' || !losing.has(op.f) || op.error?.startsWith('skipped:')) continue;
    if (started.delete(op.f)) times.push(op.time);
    else started.set(op.f, op.time);
  }
  // A fault whose end was never recorded (the run ended in it) took effect when it began.
  times.push(...started.values(), ...deathsNs);
  return times.sort((a, b) => a - b);
}
