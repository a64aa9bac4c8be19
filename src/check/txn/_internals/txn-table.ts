import { HistoryError } from '../../history/history-error.js';
import type { TxnOpInput } from '../txn-op.js';
import { IntList } from './int-list.js';
import { showAny, toScalar } from './scalar.js';

export const OK = 0;
export const INFO = 1;
export const FAILED = 2;
export type TxnStatus = typeof OK | typeof INFO | typeof FAILED;

/** The micro-ops one checker accepts. */
export interface MicroOpGrammar {
  /** Names the checker in error messages. */
  readonly checker: string;
  /** The write micro-op's name (`append`, `w`); the read's is always `r`. */
  readonly write: string;
  /** What is wrong with a committed read's value, or undefined when it fits. */
  readonly readError: (value: unknown) => string | undefined;
}

/** A micro-op whose shape was checked: `[f, key, value]`, with key and a write's value scalars. */
export type MicroOp = readonly [f: string, key: unknown, value: unknown];

/**
 * The transactions of a history, numbered in invoke order, with the op each is reported by (its
 * completion, or its invoke when it never completed) and the micro-ops that count: the
 * completion's for an ok transaction, the invoke's otherwise (a failed or indeterminate
 * transaction's reads are unknown).
 */
export interface TxnTable<T> {
  readonly count: number;
  readonly ops: readonly T[];
  /** Where each transaction's reported op sits in the history. */
  readonly positions: Int32Array;
  readonly status: Uint8Array;
  readonly process: readonly (number | string)[];
  readonly microOps: readonly (readonly MicroOp[])[];
  /** Transactions ids in history order of invokes and completions: id for an invoke, ~id for a completion. */
  readonly events: Int32Array;
}

class Reader<T extends TxnOpInput> {
  readonly ops: T[] = [];
  readonly process: (number | string)[] = [];
  readonly microOps: (readonly MicroOp[])[] = [];
  readonly status: TxnStatus[] = [];
  readonly positions = new IntList();
  readonly events = new IntList();
  /** Per process, its open transaction. */
  private readonly open = new Map<number | string, number>();

  constructor(private readonly grammar: MicroOpGrammar) {}

  add(op: T, position: number): void {
    if (op.process === 'nemesis') return;
    if (op.type === 'invoke') {
      this.invoke(op, position);
      return;
    }
    const open = this.open.get(op.process);
    if (open === undefined) this.fail(op, position, 'it completes no invoke: the process has no open op');
    this.open.delete(op.process);
    const txn = open;
    this.positions.set(txn, position);
    this.events.push(~txn);
    switch (op.type) {
      case 'ok':
        this.ops[txn] = op;
        this.status[txn] = OK;
        this.microOps[txn] = this.completed(op, position, this.microOps[txn]);
        return;
      case 'info':
        this.ops[txn] = op;
        this.status[txn] = INFO;
        return;
      case 'fail':
        this.ops[txn] = op;
        this.status[txn] = FAILED;
        return;
      default:
        this.fail(op, position, `type is ${showAny(op.type)}: use invoke, ok, fail or info`);
    }
  }

  private invoke(op: T, position: number): void {
    const already = this.open.get(op.process);
    if (already !== undefined)
      this.fail(
        op,
        position,
        `the process's op ${this.name(already)} is still open: a process runs one op at a time`,
      );
    const txn = this.ops.length;
    const microOps = this.microOpsOf(op, position, false);
    this.ops.push(op);
    this.positions.push(position);
    this.process.push(op.process);
    this.microOps.push(microOps);
    this.status.push(INFO);
    this.events.push(txn);
    this.open.set(op.process, txn);
  }

  /** The completion's micro-ops, checked against the invoke's: same kinds, keys and writes. */
  private completed(op: T, position: number, invoked: readonly MicroOp[]): readonly MicroOp[] {
    const microOps = this.microOpsOf(op, position, true);
    if (microOps.length !== invoked.length)
      this.fail(op, position, `it has ${microOps.length} micro-ops where its invoke has ${invoked.length}`);
    for (let i = 0; i < microOps.length; i++) {
      const [f, key, value] = microOps[i];
      const [invokedF, invokedKey, invokedValue] = invoked[i];
      const sameWrite = f !== this.grammar.write || toScalar(value) === toScalar(invokedValue);
      if (f !== invokedF || toScalar(key) !== toScalar(invokedKey) || !sameWrite)
        this.fail(
          op,
          position,
          `micro-op ${i} is ${showAny(microOps[i])} where its invoke has ${showAny(invoked[i])}`,
        );
    }
    return microOps;
  }

  private microOpsOf(op: T, position: number, committed: boolean): readonly MicroOp[] {
    const { value } = op;
    const write = this.grammar.write;
    if (!Array.isArray(value))
      this.fail(
        op,
        position,
        `value is ${showAny(value)}: a transaction's value is a list of micro-ops such as [["${write}", key, value], ["r", key, null]]`,
      );
    for (let i = 0; i < value.length; i++) {
      const mop: unknown = value[i];
      const problem = this.microOpError(mop, committed);
      if (problem !== undefined)
        this.fail(
          op,
          position,
          `micro-op ${i} ${showAny(mop)} ${problem}: use ["${write}", key, value] or ["r", key, ${committed ? 'value' : 'null'}]`,
        );
    }
    return value as readonly MicroOp[];
  }

  private microOpError(mop: unknown, committed: boolean): string | undefined {
    if (!Array.isArray(mop) || mop.length !== 3) return 'is not a list of 3';
    const [f, key, value] = mop as unknown[];
    if (f !== 'r' && f !== this.grammar.write) return `has f ${showAny(f)}`;
    if (toScalar(key) === undefined) return 'has a nil key';
    if (f === this.grammar.write) return toScalar(value) === undefined ? 'writes nil' : undefined;
    return committed ? this.grammar.readError(value) : undefined;
  }

  private name(txn: number): string {
    const op = this.ops[txn];
    return String(op.index ?? txn);
  }

  fail(op: T, position: number, message: string): never {
    throw new HistoryError(
      `${this.grammar.checker}: op ${op.index ?? position} (process ${String(op.process)}, ${op.type} ${op.f}): ${message}`,
      position,
    );
  }
}

/** Pairs a transactional history's invokes and completions; throws HistoryError on a bad op. */
export function readTxns<T extends TxnOpInput>(ops: readonly T[], grammar: MicroOpGrammar): TxnTable<T> {
  const reader = new Reader<T>(grammar);
  for (let position = 0; position < ops.length; position++) reader.add(ops[position], position);
  return {
    count: reader.ops.length,
    ops: reader.ops,
    status: Uint8Array.from(reader.status),
    process: reader.process,
    microOps: reader.microOps,
    positions: reader.positions.view(),
    events: reader.events.view(),
  };
}
