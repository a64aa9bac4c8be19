import type { TxnScalar, TxnOpInput } from './txn-op.js';
import type { TxnCheckOptions, TxnCheckResult } from './txn-check-result.js';
import { checkTxns } from './_internals/check-txns.js';
import { type GraphBuilder, RW, WR, WW } from './_internals/dependency-graph.js';
import { txnName } from './_internals/explain-cycle.js';
import { IntList } from './_internals/int-list.js';
import { showScalar, toScalar } from './_internals/scalar.js';
import { FAILED, type MicroOpGrammar, OK, type TxnTable } from './_internals/txn-table.js';
import type { AnomalyLog } from './_internals/txn-verdict.js';
import type { WriteTable } from './_internals/write-table.js';
import { HistoryError } from '../history/history-error.js';

const CHECKER = 'rw-register';

const GRAMMAR: MicroOpGrammar = {
  checker: CHECKER,
  write: 'w',
  readError: (value) => {
    if (value === null) return undefined;
    if (Array.isArray(value)) return 'reads a list, where a register holds one value';
    return toScalar(value) === undefined ? 'reads a value that is no EDN value' : undefined;
  },
};

/** A value no transaction wrote (WriteTable.find). */
const NOT_WRITTEN = -1;
/** The version before any write: what a read of `null` saw. */
const INITIAL = -2;
/** No known predecessor: a write made without reading the key first. */
const UNKNOWN = -3;
/** Most rw edges one key may get from readers of its initial state to its first writes. */
const INITIAL_EDGES_PER_KEY = 100_000;

/** Committed external reads: a transaction's first read of a key, before it writes that key. */
interface Reads {
  readonly txn: IntList;
  readonly key: IntList;
  readonly value: (TxnScalar | null)[];
  /** The write each read saw: INITIAL for `null`, NOT_WRITTEN for a value no transaction wrote. */
  readonly write: Int32Array;
}

/**
 * Checks a read-write register history after Elle (Kingsbury & Alvaro, VLDB 2020). Written values
 * must be unique per key, so a read names the write it saw (wr). Version orders come from what is
 * sound without further assumptions: the initial (`null`) state precedes every write, and a
 * committed transaction that read version v1 of a key and then wrote v2 installed v2 after v1
 * (true of every model from read committed up; Elle's "writes follow reads"). From them: ww
 * (v1's writer → v2's) and rw (a reader of v1 → the writer of a version right after v1) edges, plus
 * realtime and process orders when asked; cycles are classified as for list-append. Non-cycle
 * anomalies: G1a, G1b, internal, dirty updates (a committed write on an aborted version) and
 * garbage reads.
 *
 * Returns the verdict for `options.model`; throws HistoryError when the history is not an
 * rw-register history (the message names the op), TypeError on an unknown model.
 */
export function checkRwRegister<T extends TxnOpInput>(
  ops: readonly T[],
  options: TxnCheckOptions,
): TxnCheckResult<T> {
  return checkTxns<T>(
    {
      caller: 'checkRwRegister',
      grammar: GRAMMAR,
      wrote: 'wrote',
      analyse(table, writes, builder, log) {
        const predecessor = new IntList();
        const reads = collect(table, writes, predecessor, log);
        checkReads(table, writes, reads, builder, log);
        addVersionEdges(table, writes, reads, predecessor, builder, log);
        reportLostUpdates(table, writes, predecessor, log);
      },
    },
    ops,
    options,
  );
}

/**
 * Records every write with the external read its transaction made of that key before it (the
 * version it built on), checks each committed transaction's reads against its own earlier
 * micro-ops, and resolves each external read to the write it saw.
 */
function collect<T extends TxnOpInput>(
  table: TxnTable<T>,
  writes: WriteTable,
  predecessor: IntList,
  log: AnomalyLog<T>,
): Reads {
  const txns = new IntList();
  const keys = new IntList();
  const values: (TxnScalar | null)[] = [];
  const builtOn = new IntList();
  const lastStamp: number[] = [];
  const keyIds: number[] = [];
  for (let txn = 0; txn < table.count; txn++) {
    const microOps = table.microOps[txn];
    keyIds.length = microOps.length;
    for (let i = 0; i < microOps.length; i++) keyIds[i] = writes.keyId(toScalar(microOps[i][1])!);
    const final: boolean[] = [];
    for (let i = microOps.length - 1; i >= 0; i--) {
      if (microOps[i][0] !== 'w') continue;
      final[i] = lastStamp[keyIds[i]] !== txn + 1;
      lastStamp[keyIds[i]] = txn + 1;
    }
    const committed = table.status[txn] === OK;
    const known = new Map<number, { value: TxnScalar | null; wrote: boolean; read: number }>();
    for (let i = 0; i < microOps.length; i++) {
      const [f, , raw] = microOps[i];
      const key = keyIds[i];
      const value = raw === null ? null : toScalar(raw)!;
      const state = known.get(key);
      if (f === 'w') {
        const id = writes.add(txn, key, value!, final[i], i);
        if (id < 0) duplicateWrite(table, writes, txn, key, value!, -1 - id);
        const read = state?.read ?? UNKNOWN;
        builtOn.push(committed && final[i] ? read : UNKNOWN);
        known.set(key, { value, wrote: true, read });
        continue;
      }
      if (!committed) continue;
      if (state === undefined) {
        known.set(key, { value, wrote: false, read: values.length });
        txns.push(txn);
        keys.push(key);
        values.push(value);
      } else if (state.value !== value) {
        log.add({
          type: 'internal',
          op: table.ops[txn],
          key: writes.keys[key],
          read: value,
          expected: state.value,
          complete: true,
          explanation: `internal: ${txnName(table, txn)} read key ${showScalar(writes.keys[key])} = ${showScalar(value)} after it ${state.wrote ? 'wrote' : 'read'} ${showScalar(state.value)}`,
        });
      }
    }
  }
  const keyView = keys.view();
  const write = Int32Array.from(values, (value, r) =>
    value === null ? INITIAL : writes.find(keyView[r], value),
  );
  for (let w = 0; w < builtOn.length; w++) {
    const read = builtOn.get(w);
    predecessor.push(read === UNKNOWN || write[read] === NOT_WRITTEN ? UNKNOWN : write[read]);
  }
  return { txn: txns, key: keys, value: values, write };
}

/**
 * Committed transactions that read one version of a key and then wrote that key (each write's
 * predecessor, from `collect`): two on the same version are a lost update.
 */
function reportLostUpdates<T extends TxnOpInput>(
  table: TxnTable<T>,
  writes: WriteTable,
  predecessor: IntList,
  log: AnomalyLog<T>,
): void {
  const byVersion = new Map<string, { key: number; version: number; txns: number[] }>();
  for (let w = 0; w < predecessor.length; w++) {
    const version = predecessor.get(w);
    if (version === UNKNOWN) continue;
    const key = writes.key.get(w);
    const id = `${key}:${version}`;
    const group = byVersion.get(id);
    if (group === undefined) byVersion.set(id, { key, version, txns: [writes.txn.get(w)] });
    else if (!group.txns.includes(writes.txn.get(w))) group.txns.push(writes.txn.get(w));
  }
  for (const { key, version, txns } of byVersion.values()) {
    if (txns.length < 2) continue;
    const read = version === INITIAL ? null : writes.values[version];
    log.add({
      type: 'lost-update',
      key: writes.keys[key],
      read,
      ops: txns.map((t) => table.ops[t]),
      explanation: `lost-update: ${txns.map((t) => txnName(table, t)).join(' and ')} each read key ${showScalar(writes.keys[key])} = ${showScalar(read)} and then wrote it, so all but one wrote over a version another had already replaced`,
    });
  }
}

function duplicateWrite(
  table: TxnTable<TxnOpInput>,
  writes: WriteTable,
  txn: number,
  key: number,
  value: TxnScalar,
  earlier: number,
): never {
  const op = table.ops[txn];
  throw new HistoryError(
    `${CHECKER}: op ${op.index ?? table.positions[txn]}: writes ${showScalar(value)} to key ${showScalar(writes.keys[key])}, which ${txnName(table, writes.txn.get(earlier))} wrote already: rw-register needs every written value unique per key`,
    table.positions[txn],
  );
}

/** G1a, G1b and garbage reads, and the wr edge from each read's writer. */
function checkReads<T extends TxnOpInput>(
  table: TxnTable<T>,
  writes: WriteTable,
  reads: Reads,
  builder: GraphBuilder,
  log: AnomalyLog<T>,
): void {
  for (let r = 0; r < reads.write.length; r++) {
    const write = reads.write[r];
    if (write === INITIAL) continue;
    const reader = reads.txn.get(r);
    const key = writes.keys[reads.key.get(r)];
    const value = reads.value[r]!;
    if (write === NOT_WRITTEN) {
      log.add({
        type: 'garbage-read',
        op: table.ops[reader],
        key,
        value,
        explanation: `garbage-read: ${txnName(table, reader)} read key ${showScalar(key)} = ${showScalar(value)}, which no transaction wrote`,
      });
      continue;
    }
    const writer = writes.txn.get(write);
    if (writer === reader) continue;
    if (table.status[writer] === FAILED) {
      log.add({
        type: 'G1a',
        op: table.ops[reader],
        key,
        value,
        writer: table.ops[writer],
        explanation: `G1a: ${txnName(table, reader)} read key ${showScalar(key)} = ${showScalar(value)}, which ${txnName(table, writer)} wrote and then aborted`,
      });
      continue;
    }
    builder.add(writer, reader, WR, write);
    if (writes.final.get(write) === 0)
      log.add({
        type: 'G1b',
        op: table.ops[reader],
        key,
        value,
        writer: table.ops[writer],
        explanation: `G1b: ${txnName(table, reader)} read key ${showScalar(key)} = ${showScalar(value)}, which ${txnName(table, writer)} overwrote before it committed`,
      });
  }
}

/**
 * ww edges from each write's predecessor to it, dirty updates (a committed write on an aborted
 * version), and rw edges from each reader of a version to the writers of the versions right after
 * it (after the initial state: every write whose transaction did not read the key first, or read
 * null).
 */
function addVersionEdges<T extends TxnOpInput>(
  table: TxnTable<T>,
  writes: WriteTable,
  reads: Reads,
  predecessor: IntList,
  builder: GraphBuilder,
  log: AnomalyLog<T>,
): void {
  const status = table.status;
  const live = (write: number): boolean => status[writes.txn.get(write)] !== FAILED;
  const successors = new Map<number, number[]>();
  const firstWrites = new Map<number, number[]>();
  for (let w = 0; w < predecessor.length; w++) {
    if (!live(w)) continue;
    const before = predecessor.get(w);
    if (before === UNKNOWN || before === INITIAL) {
      const key = writes.key.get(w);
      const list = firstWrites.get(key);
      if (list === undefined) firstWrites.set(key, [w]);
      else list.push(w);
      continue;
    }
    const list = successors.get(before);
    if (list === undefined) successors.set(before, [w]);
    else list.push(w);
    if (live(before)) {
      builder.add(writes.txn.get(before), writes.txn.get(w), WW, before, w);
      continue;
    }
    const [abortedTxn, txn] = [writes.txn.get(before), writes.txn.get(w)];
    log.add({
      type: 'dirty-update',
      key: writes.keys[writes.key.get(w)],
      value: writes.values[before],
      writer: table.ops[abortedTxn],
      next: writes.values[w],
      nextWriter: table.ops[txn],
      explanation: `dirty-update: ${txnName(table, txn)} wrote ${showScalar(writes.values[w])} to key ${showScalar(writes.keys[writes.key.get(w)])} over ${showScalar(writes.values[before])}, which ${txnName(table, abortedTxn)} wrote and then aborted`,
    });
  }
  const initialReaders = new Map<number, number[]>();
  for (let r = 0; r < reads.write.length; r++) {
    const write = reads.write[r];
    const reader = reads.txn.get(r);
    if (write === INITIAL) {
      const key = reads.key.get(r);
      const list = initialReaders.get(key);
      if (list === undefined) initialReaders.set(key, [reader]);
      else list.push(reader);
      continue;
    }
    if (write < 0) continue;
    for (const next of successors.get(write) ?? [])
      builder.add(reader, writes.txn.get(next), RW, write, next);
  }
  for (const [key, readers] of initialReaders) {
    const first = firstWrites.get(key) ?? [];
    if (readers.length * first.length > INITIAL_EDGES_PER_KEY) continue;
    for (const reader of readers)
      for (const next of first) builder.add(reader, writes.txn.get(next), RW, INITIAL, next);
  }
}
