import type { Rng } from '../core/random.js';
import type {
  ClusterView,
  MicroOp,
  TransactionsCapability,
  TxnClient,
  TxnResult,
  TxnWorkloadName,
} from '../systems/system.js';
import type { History } from './history.js';
import { listAppendTxns } from './list-append.js';
import { rwRegisterTxns } from './rw-register.js';
import { type ClientOp, ClientWorkload } from './client-workload.js';
import type { TxnGenerator } from './_internals/txn-generator.js';

export interface TxnWorkloadOptions {
  readonly workload: TxnWorkloadName;
  readonly concurrency: number;
  /** Total transactions per second across all workers. */
  readonly rate: number;
  readonly timeoutMs: number;
}

/**
 * Jepsen's list-append / rw-register workloads: concurrent workers, each bound to one node, run
 * transactions of 1–4 micro-ops over a rotating set of keys (see `TxnGenerator`). Each is recorded
 * as `f: "txn"` with the micro-ops as its value, the reads filled in on `ok` (the worker lifecycle
 * is `ClientWorkload`'s).
 */
export class TxnWorkload extends ClientWorkload<TxnClient, TxnResult> {
  private generator: TxnGenerator | undefined;

  constructor(
    private readonly transactions: TransactionsCapability,
    cluster: ClusterView,
    history: History,
    private readonly rng: Rng,
    private readonly options: TxnWorkloadOptions,
  ) {
    super(cluster, history, options);
  }

  protected connect(node: string): TxnClient {
    const { workload } = this.options;
    return this.transactions.client(node, this.cluster, this.options.timeoutMs, { workload, runs: workload });
  }

  protected begin(prefix: string): void {
    const make = this.options.workload === 'list-append' ? listAppendTxns : rwRegisterTxns;
    this.generator = make(this.rng, prefix);
  }

  protected usedKeys(): readonly string[] {
    return this.generator?.used ?? [];
  }

  /** Each key is read in a transaction of its own. */
  protected readOp(key: string): ClientOp<TxnClient, TxnResult> {
    return txnOp([['r', key, null]]);
  }

  protected nextOp(): ClientOp<TxnClient, TxnResult> {
    if (this.generator === undefined) throw new Error('the workload has not started');
    return txnOp(this.generator.next());
  }
}

function txnOp(ops: readonly MicroOp[]): ClientOp<TxnClient, TxnResult> {
  return { f: 'txn', value: ops, call: (client) => client.txn(ops), completed: (result) => result.value };
}
