import type { Op } from '../../../src/core/op.js';
import { Rng } from '../../../src/core/random.js';

export interface TxnHistoryOptions {
  readonly seed: number;
  readonly txns: number;
  readonly processes: number;
  /** Keys in use at once; a key retires after `appendsPerKey` appends and a fresh one replaces it. */
  readonly keys: number;
  readonly appendsPerKey: number;
  readonly maxMicroOps: number;
  readonly readRate?: number;
  /** Chance a transaction ends `fail` (never applied) or `info` (applied or not, at random). */
  readonly failRate?: number;
  readonly infoRate?: number;
  /** Default list-append; rw-register writes and reads single values (unique per key). */
  readonly workload?: 'list-append' | 'rw-register';
  /** Never two transactions open at once: every invoke follows the previous completion. */
  readonly sequential?: boolean;
  /** End with one transaction that reads every key written (Jepsen's final reads). */
  readonly finalReads?: boolean;
}

/** The process of the final reads: no generated process has it. */
export const FINAL_READER = 1_000_000;

interface Running {
  readonly process: number;
  readonly value: unknown[][];
  readonly outcome: 'ok' | 'fail' | 'info';
  committed: boolean;
}

/**
 * A list-append (or rw-register) history of a real serial execution: each transaction takes effect atomically at a
 * moment between its invoke and its completion, so the history is strict serializable whatever the
 * overlap. Read lists of an unchanged key are shared, as the checker must not mutate them. Seeded.
 */
export function generateListAppendHistory(options: TxnHistoryOptions): Op[] {
  const { txns, processes, keys, appendsPerKey, maxMicroOps } = options;
  const readRate = options.readRate ?? 0.5;
  const register = options.workload === 'rw-register';
  const rng = new Rng(options.seed);
  const lists = new Map<number, number[]>();
  const snapshots = new Map<number, readonly number[]>();
  const appends = new Map<number, number>();
  const active = Array.from({ length: keys }, (_, i) => i);
  let nextKey = keys;
  const ops: Op[] = [];
  const running: (Running | undefined)[] = Array.from({ length: processes }, () => undefined);
  const processIds = Array.from({ length: processes }, (_, i) => i);
  let started = 0;
  let open = 0;
  const emit = (process: number, type: Op['type'], value: unknown): void => {
    ops.push({ index: ops.length, time: ops.length, type, process, f: 'txn', value });
  };
  const snapshot = (key: number): readonly number[] => {
    let shared = snapshots.get(key);
    if (shared === undefined) {
      shared = [...(lists.get(key) ?? [])];
      snapshots.set(key, shared);
    }
    return shared;
  };
  const apply = (value: unknown[][]): void => {
    for (const mop of value) {
      const key = mop[1] as number;
      if (mop[0] === 'r') {
        mop[2] = register ? (lists.get(key)?.at(-1) ?? null) : snapshot(key);
        continue;
      }
      let list = lists.get(key);
      if (list === undefined) lists.set(key, (list = []));
      list.push(mop[2] as number);
      snapshots.delete(key);
    }
  };
  const newTxn = (): unknown[][] => {
    const size = 1 + rng.int(maxMicroOps);
    const value: unknown[][] = [];
    for (let i = 0; i < size; i++) {
      const slot = rng.int(keys);
      const key = active[slot];
      if (rng.chance(readRate)) {
        value.push(['r', key, null]);
        continue;
      }
      const count = (appends.get(key) ?? 0) + 1;
      appends.set(key, count);
      value.push([register ? 'w' : 'append', key, count]);
      if (count >= appendsPerKey) active[slot] = nextKey++;
    }
    return value;
  };
  while (started < txns || open > 0) {
    const slot = rng.int(processes);
    const txn = running[slot];
    if (txn === undefined) {
      if (started >= txns || (options.sequential === true && open > 0)) continue;
      const value = newTxn();
      const roll = rng.next();
      const outcome =
        roll < (options.failRate ?? 0)
          ? 'fail'
          : roll < (options.failRate ?? 0) + (options.infoRate ?? 0)
            ? 'info'
            : 'ok';
      running[slot] = { process: processIds[slot], value, outcome, committed: false };
      emit(
        processIds[slot],
        'invoke',
        value.map((mop) => [...mop]),
      );
      started++;
      open++;
    } else if (!txn.committed) {
      txn.committed = true;
      if (txn.outcome === 'ok' || (txn.outcome === 'info' && rng.chance(0.5))) apply(txn.value);
    } else {
      emit(
        txn.process,
        txn.outcome,
        txn.outcome === 'ok' ? txn.value : txn.value.map((m) => (m[0] === 'r' ? ['r', m[1], null] : m)),
      );
      if (txn.outcome === 'info') processIds[slot] += processes;
      running[slot] = undefined;
      open--;
    }
  }
  if (options.finalReads === true && lists.size > 0) {
    const reads = [...lists].map(([key, list]) => ['r', key, register ? (list.at(-1) ?? null) : [...list]]);
    emit(
      FINAL_READER,
      'invoke',
      reads.map(([f, key]) => [f, key, null]),
    );
    emit(FINAL_READER, 'ok', reads);
  }
  return ops;
}
