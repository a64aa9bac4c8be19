import type { CycleAnomaly } from './anomaly.js';
import type { TxnScalar, TxnOpInput } from './txn-op.js';
import type { TxnCheckOptions, TxnCheckResult } from './txn-check-result.js';
import { checkTxns } from './_internals/check-txns.js';
import { type GraphBuilder, RW, WR, WW } from './_internals/dependency-graph.js';
import { txnName } from './_internals/explain-cycle.js';
import { IntList } from './_internals/int-list.js';
import { showList, showScalar, toScalar } from './_internals/scalar.js';
import { FAILED, type MicroOpGrammar, OK, type TxnTable } from './_internals/txn-table.js';
import type { AnomalyLog } from './_internals/txn-verdict.js';
import type { WriteTable } from './_internals/write-table.js';
import { HistoryError } from '../history/history-error.js';

const CHECKER = 'list-append';

const GRAMMAR: MicroOpGrammar = {
  checker: CHECKER,
  write: 'append',
  readError: (value) => {
    if (value === null) return undefined;
    if (!Array.isArray(value)) return 'reads a value that is not a list';
    for (const element of value as unknown[])
      if (toScalar(element) === undefined) return 'reads a list with a nil element';
    return undefined;
  },
};

/** Most rw edges one key may get from readers of its whole order to appends no read shows. */
const UNREAD_EDGES_PER_KEY = 100_000;

const NO_ELEMENTS: readonly TxnScalar[] = [];

/** The committed reads of one key. */
interface KeyReads {
  readonly txns: IntList;
  readonly lists: (readonly TxnScalar[])[];
}

/**
 * Checks a list-append history after Elle (Kingsbury & Alvaro, "Elle: Inferring Isolation
 * Anomalies from Experimental Observations", VLDB 2020). Each key's version order is its longest
 * committed read, of which every other read must be a prefix (else `incompatible-order`); reads
 * give non-cycle anomalies (G1a, G1b, internal, duplicate elements, dirty updates, garbage reads)
 * and a dependency graph (ww: consecutive appends in the order; wr: writer of a read's last element
 * → reader; rw: reader → writer of the element after what it read, and readers of the whole order →
 * writers of committed appends no read shows; plus realtime and process
 * orders when asked), whose cycles are classified (G0, G1c, G-single, G2-item and their
 * `-process`/`-realtime` variants). Appended values must be unique per key. Failed transactions did
 * not happen; indeterminate (`info`) ones may have: what they appended may be read.
 *
 * Returns the verdict for `options.model`; throws HistoryError when the history is not a
 * list-append history (the message names the op), TypeError on an unknown model.
 */
export function checkListAppend<T extends TxnOpInput>(
  ops: readonly T[],
  options: TxnCheckOptions,
): TxnCheckResult<T> {
  return checkTxns<T>(
    {
      caller: 'checkListAppend',
      grammar: GRAMMAR,
      wrote: 'appended',
      analyse(table, writes, builder, log) {
        const readThenWrite = new ReadThenWrite();
        const reads = collect(table, writes, log, readThenWrite);
        for (let key = 0; key < reads.length; key++) analyseKey(table, writes, key, reads[key], builder, log);
        readThenWrite.report(table, writes, log);
      },
    },
    ops,
    options,
  );
}

/**
 * Records every append (all transactions: a failed one's appends are what G1a reads see), checks
 * each committed transaction's reads against its own earlier micro-ops, and files committed reads
 * by key.
 */
function collect<T extends TxnOpInput>(
  table: TxnTable<T>,
  writes: WriteTable,
  log: AnomalyLog<T>,
  readThenWrite: ReadThenWrite,
): KeyReads[] {
  const reads: KeyReads[] = [];
  const lastStamp: number[] = [];
  const keyIds: number[] = [];
  for (let txn = 0; txn < table.count; txn++) {
    const microOps = table.microOps[txn];
    keyIds.length = microOps.length;
    for (let i = 0; i < microOps.length; i++) keyIds[i] = writes.keyId(toScalar(microOps[i][1])!);
    const committed = table.status[txn] === OK;
    for (let i = microOps.length - 1; i >= 0; i--) {
      const [f, , value] = microOps[i];
      const key = keyIds[i];
      if (f === 'append') {
        const final = lastStamp[key] !== txn + 1;
        lastStamp[key] = txn + 1;
        const id = writes.add(txn, key, toScalar(value)!, final, i);
        if (id < 0) duplicateAppend(table, writes, txn, key, value, -1 - id);
      } else if (committed) {
        while (reads.length <= key) reads.push({ txns: new IntList(16), lists: [] });
        reads[key].txns.push(txn);
        reads[key].lists.push(value === null ? NO_ELEMENTS : (value as readonly TxnScalar[]));
      }
    }
    if (committed && microOps.length > 1) {
      checkInternal(table, writes, txn, keyIds, log);
      checkFutureReads(table, writes, txn, keyIds, log);
      readThenWrite.note(txn, microOps, keyIds);
    }
  }
  return reads;
}

/**
 * Committed transactions that read a key before appending to it, by the version they read: two
 * that read the same one are a lost update (each appended to a list the other had already grown).
 */
class ReadThenWrite {
  private readonly byVersion = new Map<string, { key: number; read: readonly TxnScalar[]; txns: number[] }>();

  note(txn: number, microOps: TxnTable<TxnOpInput>['microOps'][number], keyIds: readonly number[]): void {
    for (let i = 0; i < microOps.length; i++) {
      if (microOps[i][0] !== 'r' || keyIds.indexOf(keyIds[i]) !== i) continue;
      if (!keyIds.some((k, j) => j > i && k === keyIds[i] && microOps[j][0] === 'append')) continue;
      const read = listOf(microOps[i][2]);
      const version = `${keyIds[i]}\u0000${showList(read)}`;
      const group = this.byVersion.get(version);
      if (group === undefined) this.byVersion.set(version, { key: keyIds[i], read, txns: [txn] });
      else group.txns.push(txn);
    }
  }

  report<T extends TxnOpInput>(table: TxnTable<T>, writes: WriteTable, log: AnomalyLog<T>): void {
    for (const { key, read, txns } of this.byVersion.values()) {
      if (txns.length < 2) continue;
      const names = txns.map((t) => txnName(table, t));
      log.add({
        type: 'lost-update',
        key: writes.keys[key],
        read,
        ops: txns.map((t) => table.ops[t]),
        explanation: `lost-update: ${names.join(' and ')} each read key ${showScalar(writes.keys[key])} = ${showList(read)} and then appended to it, so all but one appended to a list another had already changed`,
      });
    }
  }
}

function duplicateAppend(
  table: TxnTable<TxnOpInput>,
  writes: WriteTable,
  txn: number,
  key: number,
  value: unknown,
  earlier: number,
): never {
  const op = table.ops[txn];
  throw new HistoryError(
    `${CHECKER}: op ${op.index ?? table.positions[txn]}: appends ${showScalar(toScalar(value)!)} to key ${showScalar(writes.keys[key])}, which ${txnName(table, writes.txn.get(earlier))} appended already: list-append needs every appended value unique per key`,
    table.positions[txn],
  );
}

/**
 * A read must be what the transaction read of that key before plus what it appended since, or,
 * when it did not read the key before, end with what it appended. Scans back from each read (a
 * transaction has a handful of micro-ops), so nothing is allocated unless a read is wrong.
 */
function checkInternal<T extends TxnOpInput>(
  table: TxnTable<T>,
  writes: WriteTable,
  txn: number,
  keyIds: readonly number[],
  log: AnomalyLog<T>,
): void {
  const microOps = table.microOps[txn];
  for (let i = 1; i < microOps.length; i++) {
    if (microOps[i][0] !== 'r') continue;
    const key = keyIds[i];
    let before = i - 1;
    let appended = 0;
    for (; before >= 0; before--) {
      if (keyIds[before] !== key) continue;
      if (microOps[before][0] === 'r') break;
      appended++;
    }
    if (before < 0 && appended === 0) continue;
    const read = listOf(microOps[i][2]);
    const known = before < 0 ? undefined : listOf(microOps[before][2]);
    const expectedLength = (known?.length ?? 0) + appended;
    const offset = read.length - expectedLength;
    let fits = known === undefined ? offset >= 0 : offset === 0;
    for (let j = 0; fits && known !== undefined && j < known.length; j++) fits = same(read[j], known[j]);
    let at = read.length - appended;
    for (let j = before + 1; fits && j < i; j++)
      if (keyIds[j] === key) fits = same(read[at++], microOps[j][2]);
    if (fits) continue;
    const own = microOps
      .slice(before + 1, i)
      .flatMap((mop, j) => (keyIds[before + 1 + j] === key ? [toScalar(mop[2])!] : []));
    const expected = known === undefined ? own : [...known.map((v) => toScalar(v)!), ...own];
    log.add({
      type: 'internal',
      op: table.ops[txn],
      key: writes.keys[key],
      read,
      expected,
      complete: known !== undefined,
      explanation: `internal: ${txnName(table, txn)} read key ${showScalar(writes.keys[key])} = ${showList(read)} but its own earlier micro-ops imply ${known !== undefined ? '' : 'a list ending in '}${showList(expected)}`,
    });
  }
}

/** A read holding an element its own transaction appends only after that read. */
function checkFutureReads<T extends TxnOpInput>(
  table: TxnTable<T>,
  writes: WriteTable,
  txn: number,
  keyIds: readonly number[],
  log: AnomalyLog<T>,
): void {
  const microOps = table.microOps[txn];
  for (let i = 0; i < microOps.length; i++) {
    if (microOps[i][0] !== 'r') continue;
    const read = listOf(microOps[i][2]);
    for (let j = i + 1; j < microOps.length; j++) {
      if (microOps[j][0] !== 'append' || keyIds[j] !== keyIds[i]) continue;
      const value = toScalar(microOps[j][2])!;
      if (!read.some((element) => same(element, value))) continue;
      log.add({
        type: 'future-read',
        op: table.ops[txn],
        key: writes.keys[keyIds[i]],
        value,
        explanation: `future-read: ${txnName(table, txn)} read key ${showScalar(writes.keys[keyIds[i]])} = ${showList(read)}, with ${showScalar(value)}, which it appended only afterwards`,
      });
      return;
    }
  }
}

function listOf(value: unknown): readonly TxnScalar[] {
  return value === null ? NO_ELEMENTS : (value as readonly TxnScalar[]);
}

/** Equal as scalars: the same value, or a bigint and a number of the same integer. */
function same(a: unknown, b: unknown): boolean {
  return a === b || toScalar(a) === toScalar(b);
}

/**
 * One key: its version order (the longest read), the reads checked against it, and the ww, wr and
 * rw edges it gives. A key whose reads disagree or repeat an element has no trusted order: it gives
 * wr edges only.
 */
function analyseKey<T extends TxnOpInput>(
  table: TxnTable<T>,
  writes: WriteTable,
  key: number,
  reads: KeyReads,
  builder: GraphBuilder,
  log: AnomalyLog<T>,
): void {
  const { txns, lists } = reads;
  if (lists.length === 0) return;
  const keyName = writes.keys[key];
  let longest = 0;
  for (let r = 1; r < lists.length; r++) if (lists[r].length > lists[longest].length) longest = r;
  const order = lists[longest];
  const orderWrites = new Int32Array(order.length);
  for (let i = 0; i < order.length; i++) orderWrites[i] = writes.find(key, toScalar(order[i])!);
  let ordered = !hasDuplicates(table, writes, key, txns.get(longest), order, orderWrites, log);
  let reportedIncompatible = false;
  for (let r = 0; r < lists.length; r++) {
    const list = lists[r];
    if (r !== longest && !isPrefix(list, order)) {
      ordered = false;
      if (!reportedIncompatible) {
        reportedIncompatible = true;
        const [a, b] = [table.ops[txns.get(longest)], table.ops[txns.get(r)]];
        log.add({
          type: 'incompatible-order',
          key: keyName,
          ops: [a, b],
          reads: [order, list],
          explanation: `incompatible-order: ${txnName(table, txns.get(longest))} read key ${showScalar(keyName)} = ${showList(order)} and ${txnName(table, txns.get(r))} read ${showList(list)}: neither is a prefix of the other`,
        });
      }
    }
  }
  const live = (write: number): boolean => isLive(table, writes, write);
  // nextLive[p]: the first position at or after p whose writer did not fail (order.length if none).
  const nextLive = new Int32Array(order.length + 1);
  nextLive[order.length] = order.length;
  for (let p = order.length - 1; p >= 0; p--) nextLive[p] = live(orderWrites[p]) ? p : nextLive[p + 1];
  let firstAborted = order.length;
  let firstGarbage = order.length;
  for (let p = order.length - 1; p >= 0; p--) {
    if (orderWrites[p] < 0) firstGarbage = p;
    else if (!live(orderWrites[p])) firstAborted = p;
  }
  for (let r = 0; r < lists.length; r++) {
    const reader = txns.get(r);
    const list = lists[r];
    const prefix = r === longest || isPrefix(list, order);
    let listWrites = orderWrites;
    let aborted = firstAborted;
    let garbage = firstGarbage;
    if (!prefix) {
      listWrites = Int32Array.from(list, (element) => writes.find(key, toScalar(element)!));
      hasDuplicates(table, writes, key, reader, list, listWrites, log);
      [aborted, garbage] = [list.length, list.length];
      for (let p = list.length - 1; p >= 0; p--) {
        if (listWrites[p] < 0) garbage = p;
        else if (!isLive(table, writes, listWrites[p])) aborted = p;
      }
    }
    if (aborted < list.length) {
      const write = listWrites[aborted];
      const writer = writes.txn.get(write);
      log.add({
        type: 'G1a',
        op: table.ops[reader],
        key: keyName,
        value: writes.values[write],
        writer: table.ops[writer],
        explanation: `G1a: ${txnName(table, reader)} read key ${showScalar(keyName)} = ${showList(list)}, with ${showScalar(writes.values[write])}, which ${txnName(table, writer)} appended and then aborted`,
      });
    }
    if (garbage < list.length)
      log.add({
        type: 'garbage-read',
        op: table.ops[reader],
        key: keyName,
        value: toScalar(list[garbage])!,
        explanation: `garbage-read: ${txnName(table, reader)} read key ${showScalar(keyName)} = ${showList(list)}, with ${showScalar(toScalar(list[garbage])!)}, which no transaction appended`,
      });
    const last = list.length === 0 ? -1 : listWrites[list.length - 1];
    if (isLive(table, writes, last)) {
      const writer = writes.txn.get(last);
      if (writer !== reader) {
        builder.add(writer, reader, WR, last);
        if (writes.final.get(last) === 0)
          log.add({
            type: 'G1b',
            op: table.ops[reader],
            key: keyName,
            value: writes.values[last],
            writer: table.ops[writer],
            explanation: `G1b: ${txnName(table, reader)} read key ${showScalar(keyName)} = ${showList(list)}, ending in ${showScalar(writes.values[last])}, which ${txnName(table, writer)} appended but followed with another append to that key`,
          });
      }
    }
    if (ordered) {
      const next = nextLive[list.length];
      if (next < order.length)
        builder.add(reader, writes.txn.get(orderWrites[next]), RW, last, orderWrites[next]);
    }
  }
  if (ordered) {
    addVersionEdges(table, writes, keyName, orderWrites, live, builder, log);
    addUnreadEdges(table, writes, key, reads, order.length, orderWrites, builder);
  }
}

/**
 * A committed append no read shows came after everything any read shows (every read is a prefix of
 * the final list, which holds it): whoever read the whole version order read it before that append
 * (rw), and the last append the reads show was made before it (ww). Without these edges a write
 * skew nobody read afterwards would go unseen, and so would a G-single through such an append (the
 * Elle paper's own example). The rw edges are skipped for a key where they would be too many.
 */
function addUnreadEdges(
  table: TxnTable<TxnOpInput>,
  writes: WriteTable,
  key: number,
  reads: KeyReads,
  orderLength: number,
  orderWrites: Int32Array,
  builder: GraphBuilder,
): void {
  const shown = new Set(orderWrites);
  const unread: number[] = [];
  for (const write of writes.byValue[key].values())
    if (!shown.has(write) && table.status[writes.txn.get(write)] === OK) unread.push(write);
  if (unread.length === 0) return;
  const readers: number[] = [];
  for (let r = 0; r < reads.lists.length; r++)
    if (reads.lists[r].length === orderLength) readers.push(reads.txns.get(r));
  if (readers.length * unread.length > UNREAD_EDGES_PER_KEY) return;
  const last = orderLength === 0 ? -1 : orderWrites[orderLength - 1];
  for (const reader of readers)
    for (const write of unread) builder.add(reader, writes.txn.get(write), RW, last, write);
  // And its writer came after the last live append any read shows (ww), as Elle infers.
  let lastLive = orderLength - 1;
  while (lastLive >= 0 && !isLive(table, writes, orderWrites[lastLive])) lastLive--;
  if (lastLive < 0) return;
  const before = writes.txn.get(orderWrites[lastLive]);
  for (const write of unread) {
    const after = writes.txn.get(write);
    if (after !== before) builder.add(before, after, WW, orderWrites[lastLive], write);
  }
}

/**
 * ww edges between consecutive live appends; dirty updates (a live append right after an aborted
 * one); and a transaction's appends in the reverse of the order it made them, a cycle of one
 * transaction reported as G0 (as Elle reports a read of a later write of its own as G1c).
 */
function addVersionEdges<T extends TxnOpInput>(
  table: TxnTable<T>,
  writes: WriteTable,
  keyName: TxnScalar,
  orderWrites: Int32Array,
  live: (write: number) => boolean,
  builder: GraphBuilder,
  log: AnomalyLog<T>,
): void {
  let previous = -1;
  let reportedDirty = false;
  for (let p = 0; p < orderWrites.length; p++) {
    const write = orderWrites[p];
    if (!live(write)) continue;
    if (previous >= 0) {
      const [before, after] = [writes.txn.get(previous), writes.txn.get(write)];
      builder.add(before, after, WW, previous, write);
      if (before === after && writes.slot.get(previous) > writes.slot.get(write))
        log.add(reversedAppends(table, keyName, after, writes.values[write], writes.values[previous]));
    }
    const before = p === 0 ? -1 : orderWrites[p - 1];
    if (!reportedDirty && before >= 0 && !live(before)) {
      reportedDirty = true;
      const [abortedTxn, txn] = [writes.txn.get(before), writes.txn.get(write)];
      log.add({
        type: 'dirty-update',
        key: keyName,
        value: writes.values[before],
        writer: table.ops[abortedTxn],
        next: writes.values[write],
        nextWriter: table.ops[txn],
        explanation: `dirty-update: ${txnName(table, txn)} appended ${showScalar(writes.values[write])} to key ${showScalar(keyName)} right after ${showScalar(writes.values[before])}, which ${txnName(table, abortedTxn)} appended and then aborted`,
      });
    }
    previous = write;
  }
}

function reversedAppends<T extends TxnOpInput>(
  table: TxnTable<T>,
  key: TxnScalar,
  txn: number,
  first: TxnScalar,
  second: TxnScalar,
): CycleAnomaly<T> {
  const name = txnName(table, txn);
  return {
    type: 'G0',
    cycle: [{ op: table.ops[txn], edge: { type: 'ww', key, value: second, next: first } }],
    explanation: `G0: ${name} appended ${showScalar(first)} then ${showScalar(second)} to key ${showScalar(key)}, but the key's order has ${showScalar(second)} first; so ${name} would have to come before itself.`,
  };
}

function isLive(table: TxnTable<TxnOpInput>, writes: WriteTable, write: number): boolean {
  return write >= 0 && table.status[writes.txn.get(write)] !== FAILED;
}

function isPrefix(list: readonly TxnScalar[], of: readonly TxnScalar[]): boolean {
  if (list === of) return true;
  if (list.length > of.length) return false;
  for (let i = 0; i < list.length; i++) if (!same(list[i], of[i])) return false;
  return true;
}

/** Reports the first element the read holds twice; true when there is one. */
function hasDuplicates<T extends TxnOpInput>(
  table: TxnTable<T>,
  writes: WriteTable,
  key: number,
  reader: number,
  list: readonly TxnScalar[],
  listWrites: Int32Array,
  log: AnomalyLog<T>,
): boolean {
  const seen = new Set<TxnScalar>();
  const seenGarbage = new Set<TxnScalar>();
  for (let i = 0; i < list.length; i++) {
    const value = toScalar(list[i])!;
    const [set, id] = listWrites[i] >= 0 ? [seen, listWrites[i]] : [seenGarbage, value];
    if (!set.has(id)) {
      set.add(id);
      continue;
    }
    log.add({
      type: 'duplicate-elements',
      op: table.ops[reader],
      key: writes.keys[key],
      value,
      read: list,
      explanation: `duplicate-elements: ${txnName(table, reader)} read key ${showScalar(writes.keys[key])} = ${showList(list)}, with ${showScalar(value)} more than once`,
    });
    return true;
  }
  return false;
}
