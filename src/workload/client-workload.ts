import { canonical, type Canonical } from '../check/models/value.js';
import type { Clock } from '../core/clock.js';
import { ClientScope } from '../core/client-scope.js';
import type { ClusterView } from '../systems/system.js';
import type { History } from './history.js';
import type { FinalReadOptions, OpCounts, Workload } from './workload.js';
import { isRefusal } from '../core/refusal.js';
import { closeClient, type Closable } from './close-client.js';
import { Throttle } from './_internals/throttle.js';
import { withTimeout } from './_internals/with-timeout.js';

const FAIL_BACKOFF_MS = 100;
/** Between rounds of final reads that found the nodes still disagreeing. */
const CONVERGE_POLL_MS = 200;
/** How long past the client's own timeout a call may take before the worker gives up on it. */
const TIMEOUT_MARGIN_MS = 500;

/** What a client call answers: `info` when its outcome is unknown. */
export type CallOutcome =
  | { readonly type: 'ok' }
  | { readonly type: 'fail'; readonly error: string }
  | { readonly type: 'info'; readonly error: string };

/** One op a worker runs: what the history records at its invocation, and how it is called. */
export interface ClientOp<C, R extends CallOutcome> {
  readonly f: string;
  readonly value: unknown;
  call(client: C): Promise<R>;
  /** The value recorded when the op succeeds (e.g. a read's value filled in). */
  completed(result: Extract<R, { type: 'ok' }>): unknown;
  /** Called with every outcome, after it is recorded (e.g. to remember a value seen). */
  settled?(result: R): void;
}

export interface ClientWorkloadOptions {
  readonly concurrency: number;
  /** Total ops per second across all workers. */
  readonly rate: number;
  readonly timeoutMs: number;
}

/**
 * Jepsen's client workers, whatever the ops: `concurrency` workers, each bound to one node and paced
 * together to `rate`, run the ops a subclass generates and record each invocation and completion.
 * A refusal (`fail`) pauses the worker; an unknown outcome (`info`) retires its process (Jepsen never
 * reuses one) and its client. The final reads read every key a schedule used, each retried from the
 * next node until they answer or the deadline passes.
 */
export abstract class ClientWorkload<C extends Closable, R extends CallOutcome> implements Workload {
  readonly counts: OpCounts = { ok: 0, fail: 0, info: 0, refused: 0 };
  private running = false;
  private workers: Promise<void>[] = [];
  private readonly processes: number[] = [];
  private readonly abort = new AbortController();
  private readonly throttle: Throttle;
  private readonly scopes = new WeakMap<C, ClientScope>();
  private readonly clock: Clock;

  constructor(
    protected readonly cluster: ClusterView,
    private readonly history: History,
    private readonly pacing: ClientWorkloadOptions,
  ) {
    for (let w = 0; w < pacing.concurrency; w++) this.processes.push(w);
    this.throttle = new Throttle(pacing.rate, this.abort.signal, history.clock);
    this.clock = history.clock;
  }

  /** A client of `node`, with the workload's timeout. */
  protected abstract connect(node: string): C;
  /** Starts a schedule's fresh keys, named after `prefix`. */
  protected abstract begin(prefix: string): void;
  /** The next op any worker runs. */
  protected abstract nextOp(): ClientOp<C, R>;
  /** Every key this schedule used so far. */
  protected abstract usedKeys(): readonly string[];
  /** The op that reads `key` once (the final reads). */
  protected abstract readOp(key: string): ClientOp<C, R>;

  start(prefix: string): void {
    if (this.running) throw new Error('workload already running');
    this.running = true;
    this.begin(prefix);
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

  /**
   * Jepsen's final reads: once the faults are healed and the system serves again, read every key
   * this schedule used, once each, so a write lost after the workload stopped (a demoted primary
   * that resynchronises later, a rolled-back log) is seen by the check. A read that fails or gets no
   * answer is retried, from the next node, until `deadlineMs` (a key never read is simply absent).
   * Returns how many keys were read.
   */
  async finalReads(deadlineMs: number, options: FinalReadOptions = {}): Promise<number> {
    if (this.running) throw new Error('final reads while the workload runs');
    const end = this.clock.nowMs() + deadlineMs;
    return options.untilConverged === true ? this.readUntilConverged(end) : this.readEachKeyOnce(end);
  }

  /**
   * Every key read once, from any node, marked final: a read that fails is retried from the next
   * node.
   */
  private async readEachKeyOnce(end: number): Promise<number> {
    const nodes = this.cluster.nodes;
    const pending = [...this.usedKeys()];
    let read = 0;
    const reader = async (w: number): Promise<void> => {
      let attempt = 0;
      let client: C | undefined;
      let node = nodes[w % nodes.length];
      for (let key = pending.shift(); key !== undefined;) {
        if (this.clock.nowMs() >= end || this.abort.signal.aborted) break;
        client = (await this.keep(client)) ?? this.open(node);
        const result = await this.invoke(w, node, client, this.readOp(key), true);
        if (result.type === 'ok') {
          read++;
          key = pending.shift();
          continue;
        }
        await this.retire(client);
        client = undefined;
        node = nodes[(w + ++attempt) % nodes.length];
        await this.clock.sleep(FAIL_BACKOFF_MS, this.abort.signal);
      }
      await this.retire(client);
    };
    await Promise.all(this.processes.map((_, w) => reader(w)));
    return read;
  }

  /**
   * For reads that may be stale: rounds in which every node reads every key, until one round has
   * every node answer every key with the same value (the nodes caught up) or half the time is
   * spent; then one more round with `final` set, which the check holds to every acknowledged
   * write. A node that has still not caught up by then shows as a stale final read.
   */
  private async readUntilConverged(end: number): Promise<number> {
    const keys = [...this.usedKeys()];
    if (keys.length === 0) return 0;
    const convergeBy = this.clock.nowMs() + (end - this.clock.nowMs()) / 2;
    for (;;) {
      const round = await this.readRound(keys, end, false);
      if (round.converged || this.clock.nowMs() >= convergeBy || this.abort.signal.aborted) break;
      await this.clock.sleep(CONVERGE_POLL_MS, this.abort.signal);
    }
    return (await this.readRound(keys, end, true)).keysRead;
  }

  /**
   * Each node reads every key once (node i by worker i mod concurrency, a worker's nodes one after
   * another). Converged: every read answered, and each key's answers on all nodes are one value.
   */
  private async readRound(
    keys: readonly string[],
    end: number,
    final: boolean,
  ): Promise<{ readonly converged: boolean; readonly keysRead: number }> {
    const nodes = this.cluster.nodes;
    const seen = new Map<string, Set<Canonical>>();
    const answered = new Set<string>();
    let failed = false;
    const readNode = async (w: number, node: string): Promise<void> => {
      let client: C | undefined;
      for (const key of keys) {
        if (this.clock.nowMs() >= end || this.abort.signal.aborted) {
          failed = true;
          break;
        }
        client = (await this.keep(client)) ?? this.open(node);
        const op = this.readOp(key);
        const result = await this.invoke(w, node, client, op, final);
        if (result.type !== 'ok') {
          failed = true;
          await this.retire(client);
          client = undefined;
          continue;
        }
        answered.add(key);
        const value = canonical(op.completed(result as Extract<R, { type: 'ok' }>));
        const values = seen.get(key) ?? new Set<Canonical>();
        seen.set(key, values.add(value));
      }
      await this.retire(client);
    };
    const byWorker = this.processes.map((_, w) => nodes.filter((_, i) => i % this.processes.length === w));
    await Promise.all(
      byWorker.map(async (mine, w) => {
        for (const node of mine) await readNode(w, node);
      }),
    );
    const agree = [...seen.values()].every((values) => values.size === 1);
    return { converged: !failed && agree, keysRead: answered.size };
  }

  private async worker(w: number): Promise<void> {
    const nodes = this.cluster.nodes;
    const node = nodes[w % nodes.length];
    let client: C | undefined;
    while (this.running) {
      await this.throttle.wait();
      if (!this.running) break;
      client = (await this.keep(client)) ?? this.open(node);
      const result = await this.invoke(w, node, client, this.nextOp());
      if (result.type === 'fail') {
        // A node that refuses (down, not leader) is retried after a pause, not hammered.
        await this.clock.sleep(FAIL_BACKOFF_MS, this.abort.signal);
      } else if (result.type === 'info') {
        await this.retire(client);
        client = undefined;
      }
    }
    await this.retire(client);
  }

  /** A client of `node` made in its own scope, so what its library throws later is traced to it. */
  private open(node: string): C {
    const scope = new ClientScope(node);
    const client = scope.run(() => this.connect(node));
    this.scopes.set(client, scope);
    return client;
  }

  /** The client, unless its library threw outside a call since: then it is closed and replaced. */
  private async keep(client: C | undefined): Promise<C | undefined> {
    if (client === undefined || this.scopes.get(client)?.failed === undefined) return client;
    await this.retire(client);
    return undefined;
  }

  private async retire(client: C | undefined): Promise<void> {
    if (client === undefined) return;
    const scope = this.scopes.get(client);
    await (scope ? scope.run(() => closeClient(client)) : closeClient(client));
  }

  /**
   * One op by worker `w`'s process: records the invocation and its completion, counts it, and
   * retires the process when the outcome is indeterminate.
   */
  private async invoke(w: number, node: string, client: C, op: ClientOp<C, R>, final = false): Promise<R> {
    const process = this.processes[w];
    const { f, value } = op;
    const mark = final ? { final: true as const } : {};
    this.history.record({ type: 'invoke', process, f, value, node, ...mark });
    let result: R;
    try {
      const scope = this.scopes.get(client);
      const call = scope ? scope.call(() => op.call(client)) : op.call(client);
      result = await withTimeout(call, this.pacing.timeoutMs + TIMEOUT_MARGIN_MS, this.clock);
    } catch (error) {
      result = { type: 'info', error: error instanceof Error ? error.message : String(error) } as R;
    }
    if (isRefusal(result)) this.counts.refused = (this.counts.refused ?? 0) + 1;
    else this.counts[result.type]++;
    const servedBy = (result as { served?: unknown }).served;
    const served = typeof servedBy === 'string' && servedBy !== node ? { served: servedBy } : {};
    if (result.type === 'ok') {
      const completed = op.completed(result as Extract<R, { type: 'ok' }>);
      this.history.record({ type: 'ok', process, f, value: completed, node, ...served, ...mark });
    } else {
      const error = (result as { error: string }).error;
      this.history.record({ type: result.type, process, f, value, node, error, ...served, ...mark });
      // Jepsen: a process whose op is indeterminate is never reused.
      if (result.type === 'info') this.processes[w] = process + this.pacing.concurrency;
    }
    op.settled?.(result);
    return result;
  }
}
