import type { Op } from '../core/op.js';
import { pairOps } from '../core/op.js';
import { exactJson } from '../core/exact-json.js';
import { completedValue, describePair, opKey, positionsOf } from './_internals/op-pairs.js';

/** What can go wrong with one element of a set. */
export type SetAnomalyType = 'lost' | 'unexpected' | 'stale';

/**
 * One element gone wrong, with the ops that prove it: `lost` — its add was acknowledged (or a
 * read saw it) and the last read that began after that does not hold it; `unexpected` — a read
 * holds it but no add of it was attempted (or its add failed); `stale` — a read that began after
 * it was known to be in the set does not hold it, yet a later read does.
 */
export interface SetAnomaly {
  readonly type: SetAnomalyType;
  /** The set's key; `undefined` for a history of one set with bare values. */
  readonly key: unknown;
  readonly element: unknown;
  /** The add (invocation, completion) and the read (invocation, completion) that prove it. */
  readonly ops: readonly Op[];
  readonly message: string;
}

export interface SetCheckResult {
  readonly valid: boolean;
  readonly keys: number;
  /** Elements whose add was invoked (`fail`ed ones excluded). */
  readonly attempted: number;
  readonly acknowledged: number;
  /** Elements read in the set although their add's outcome was unknown (not an anomaly). */
  readonly recovered: number;
  /** Acknowledged elements no read began after (nothing to say about them). */
  readonly neverRead: number;
  readonly lost: readonly SetAnomaly[];
  readonly unexpected: readonly SetAnomaly[];
  readonly stale: readonly SetAnomaly[];
}

interface Add {
  readonly invoke: Op;
  readonly completion: Op | undefined;
  readonly element: unknown;
}

interface Read {
  readonly invoke: Op;
  readonly completion: Op;
  readonly start: number;
  readonly end: number;
  readonly elements: ReadonlySet<string>;
}

interface KeySet {
  readonly key: unknown;
  readonly adds: Map<string, Add>;
  readonly reads: Read[];
}

function elementsOf(value: unknown, op: Op): Set<string> {
  if (!Array.isArray(value)) {
    throw new Error(`op ${op.index}: a set read returns a list of elements, got ${exactJson(value)}`);
  }
  return new Set(value.map((e) => exactJson(e)));
}

/**
 * Jepsen's set check, element by element over every read (not only the last): ops are `add`
 * (value the element, unique per set) and `read` (the list of elements on `ok`), keyed as
 * `[key, v]` when the history has several sets. An element is known to be in the set from the
 * completion of its acknowledged add or of the first read that holds it; every read that begins
 * after that must hold it. The order is the history's order. Throws on a value of the wrong shape.
 */
export function checkSet(ops: readonly Op[]): SetCheckResult {
  const positions = positionsOf(ops);
  const sets = new Map<string, KeySet>();
  const setOf = (id: string, key: unknown): KeySet => {
    let set = sets.get(id);
    if (set === undefined) {
      set = { key, adds: new Map(), reads: [] };
      sets.set(id, set);
    }
    return set;
  };
  for (const { invoke, completion } of pairOps(ops)) {
    const { key, v, id, keyed } = opKey(invoke);
    if (invoke.f === 'add') {
      const element = exactJson(v);
      const set = setOf(id, key);
      if (set.adds.has(element)) {
        throw new Error(
          `op ${invoke.index}: element ${element} is added twice; the set check needs unique elements`,
        );
      }
      set.adds.set(element, { invoke, completion, element: v });
    } else if (invoke.f === 'read') {
      if (completion?.type !== 'ok') continue;
      setOf(id, key).reads.push({
        invoke,
        completion,
        start: positions.get(invoke) ?? 0,
        end: positions.get(completion) ?? 0,
        elements: elementsOf(completedValue(completion, keyed), completion),
      });
    } else {
      throw new Error(`op ${invoke.index}: a set history has add and read ops, not ${invoke.f}`);
    }
  }
  const lost: SetAnomaly[] = [];
  const unexpected: SetAnomaly[] = [];
  const stale: SetAnomaly[] = [];
  let attempted = 0;
  let acknowledged = 0;
  let recovered = 0;
  let neverRead = 0;
  for (const set of sets.values()) {
    const where = set.key === undefined ? '' : `key ${exactJson(set.key)}: `;
    const anomaly = (
      type: SetAnomalyType,
      element: unknown,
      proof: readonly (Op | undefined)[],
      message: string,
    ): SetAnomaly => ({
      type,
      key: set.key,
      element,
      ops: proof.filter((op): op is Op => op !== undefined),
      message: `${where}element ${exactJson(element)} ${message}`,
    });
    const reads = [...set.reads].sort((a, b) => a.end - b.end);
    const firstReadHolding = new Map<string, Read>();
    for (const read of reads) {
      for (const e of read.elements) if (!firstReadHolding.has(e)) firstReadHolding.set(e, read);
    }
    for (const [e, read] of firstReadHolding) {
      const add = set.adds.get(e);
      if (add === undefined) {
        unexpected.push(
          anomaly(
            'unexpected',
            JSON.parse(e),
            [read.invoke, read.completion],
            `was never added, yet ${describePair(read.invoke, read.completion)} returned it`,
          ),
        );
      } else if (add.completion?.type === 'fail') {
        unexpected.push(
          anomaly(
            'unexpected',
            add.element,
            [add.invoke, add.completion, read.invoke, read.completion],
            `was added by ${describePair(add.invoke, add.completion)}, which failed, yet ${describePair(read.invoke, read.completion)} returned it`,
          ),
        );
      }
    }
    for (const [e, add] of set.adds) {
      if (add.completion?.type === 'fail') continue;
      attempted++;
      const ok = add.completion?.type === 'ok';
      if (ok) acknowledged++;
      const seen = firstReadHolding.get(e);
      if (!ok && seen !== undefined) recovered++;
      const addEnd = ok && add.completion !== undefined ? (positions.get(add.completion) ?? 0) : Infinity;
      const knownAt = Math.min(addEnd, seen?.end ?? Infinity);
      if (knownAt === Infinity) continue;
      const after = reads.filter((r) => r.start > knownAt);
      if (after.length === 0) {
        if (ok && seen === undefined) neverRead++;
        continue;
      }
      const absent = after.filter((r) => !r.elements.has(e));
      if (absent.length === 0) continue;
      const lastAbsent = absent.reduce((a, b) => (b.start > a.start ? b : a));
      const laterPresent = after.find((r) => r.elements.has(e) && r.start > lastAbsent.start);
      const known =
        addEnd <= (seen?.end ?? Infinity)
          ? `was added by ${describePair(add.invoke, add.completion)}`
          : `was returned by ${describePair(seen!.invoke, seen!.completion)}`;
      if (laterPresent === undefined) {
        lost.push(
          anomaly(
            'lost',
            add.element,
            [add.invoke, add.completion, lastAbsent.invoke, lastAbsent.completion],
            `lost: it ${known}, but ${describePair(lastAbsent.invoke, lastAbsent.completion)}, which began after that, does not hold it (${lastAbsent.elements.size} elements), nor does any read after`,
          ),
        );
      } else {
        stale.push(
          anomaly(
            'stale',
            add.element,
            [
              add.invoke,
              add.completion,
              lastAbsent.invoke,
              lastAbsent.completion,
              laterPresent.invoke,
              laterPresent.completion,
            ],
            `read stale: it ${known}, but ${describePair(lastAbsent.invoke, lastAbsent.completion)}, which began after that, does not hold it, and the later ${describePair(laterPresent.invoke, laterPresent.completion)} does`,
          ),
        );
      }
    }
  }
  return {
    valid: lost.length === 0 && unexpected.length === 0 && stale.length === 0,
    keys: sets.size,
    attempted,
    acknowledged,
    recovered,
    neverRead,
    lost,
    unexpected,
    stale,
  };
}
