import { sleep } from '../core/clock.js';
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
import { Throttle } from './_internals/throttle.js';
import type { TxnGenerator } from './_internals/txn-generator.js';
import { withTimeout } from './_internals/with-timeout.js';
import type { OpCounts, Workload } from './workload.js';

const FAIL_BACKOFF_MS = 100;
/** How long past the client's own timeout a call may take before the worker gives up on it. */
const TIMEOUT_MARGIN_MS = 500;

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
 * as `f: "txn"` with the micro-ops as its value, the reads filled in on `ok`. A timeout or lost
 * connection is `info` and the worker continues under a new process id; a definite refusal is `fail`.
 */
export class TxnWorkload implements Workload {
  readonly counts: OpCounts = { ok: 0, fail: 0, info: 0 };
  private running = false;
  private workers: Promise<void>[] = [];
  private generator: TxnGenerator | undefined;
  private readonly processes: number[] = [];
  private readonly abort = new AbortController();
  private readonly throttle: Throttle;

  constructor(
    private readonly transactions: TransactionsCapability,
    private readonly cluster: ClusterView,
    private readonly history: History,
    private readonly rng: Rng,
    private readonly options: TxnWorkloadOptions,
  ) {
    for (let w = 0; w < options.concurrency; w++) this.processes.push(w);
    this.throttle = new Throttle(options.rate, this.abort.signal);
  }

  start(prefix: string): void {
    if (this.running) throw new Error('workload already running');
    this.running = true;
    const make = this.options.workload === 'list-append' ? listAppendTxns : rwRegisterTxns;
    this.generator = make(this.rng, prefix);
    this.workers = this.processes.map((_, w) => this.worker(w));
  }

  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.workers);
    this.workers = [];
  }

  interrupt(): void {
    this.running = false;
    this.abort.abort();
  }

  /** Reads each key the schedule used in a transaction of its own, retried from the next node. */
  async finalReads(deadlineMs: number): Promise<number> {
    if (this.running) throw new Error('final reads while the workload runs');
    const nodes = this.cluster.nodes;
    const end = Date.now() + deadlineMs;
    const pending = [...(this.generator?.used ?? [])];
    let read = 0;
    const reader = async (w: number): Promise<void> => {
      let attempt = 0;
      let client: TxnClient | undefined;
      let node = nodes[w % nodes.length];
      for (let key = pending.shift(); key !== undefined;) {
        if (Date.now() >= end || this.abort.signal.aborted) break;
        client ??= this.transactions.client(node, this.cluster, this.options.timeoutMs);
        const result = await this.invoke(w, node, client, [['r', key, null]]);
        if (result.type === 'ok') {
          read++;
          key = pending.shift();
          continue;
        }
        await client.close().catch(() => undefined);
        client = undefined;
        node = nodes[(w + ++attempt) % nodes.length];
        await sleep(FAIL_BACKOFF_MS, this.abort.signal);
      }
      await client?.close().catch(() => undefined);
    };
    await Promise.all(this.processes.map((_, w) => reader(w)));
    return read;
  }

  private async worker(w: number): Promise<void> {
    const nodes = this.cluster.nodes;
    const node = nodes[w % nodes.length];
    let client: TxnClient | undefined;
    while (this.running) {
      await this.throttle.wait();
      if (!this.running || this.generator === undefined) break;
      client ??= this.transactions.client(node, this.cluster, this.options.timeoutMs);
      const result = await this.invoke(w, node, client, this.generator.next());
      if (result.type === 'fail') {
        // A node that refuses (down, not leader) is retried after a pause, not hammered.
        await sleep(FAIL_BACKOFF_MS, this.abort.signal);
      } else if (result.type === 'info') {
        await client.close().catch(() => undefined);
        client = undefined;
      }
    }
    await client?.close().catch(() => undefined);
  }

  /**
   * One transaction by worker `w`'s process: records the invocation and its completion (reads
   * filled in), counts it, and retires the process when the outcome is indeterminate.
   */
  private async invoke(
    w: number,
    node: string,
    client: TxnClient,
    ops: readonly MicroOp[],
  ): Promise<TxnResult> {
    const process = this.processes[w];
    this.history.record({ type: 'invoke', process, f: 'txn', value: ops, node });
    let result: TxnResult;
    try {
      result = await withTimeout(client.txn(ops), this.options.timeoutMs + TIMEOUT_MARGIN_MS);
    } catch (error) {
      result = { type: 'info', error: error instanceof Error ? error.message : String(error) };
    }
    this.counts[result.type]++;
    if (result.type === 'ok') {
      this.history.record({ type: 'ok', process, f: 'txn', value: result.value, node });
    } else {
      this.history.record({ type: result.type, process, f: 'txn', value: ops, node, error: result.error });
      // Jepsen: a process whose op is indeterminate is never reused.
      if (result.type === 'info') this.processes[w] = process + this.options.concurrency;
    }
    return result;
  }
}
