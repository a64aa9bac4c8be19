import { sleep } from '../core/clock.js';
import type { Rng } from '../core/random.js';
import type { ClientResult, ClusterView, KvClient, SystemAdapter } from '../systems/system.js';
import type { History } from './history.js';
import { Throttle } from './_internals/throttle.js';
import { withTimeout } from './_internals/with-timeout.js';
import type { OpCounts, Workload } from './workload.js';

const FAIL_BACKOFF_MS = 100;

export interface RegisterWorkloadOptions {
  readonly concurrency: number;
  /** Total client ops per second across all workers. */
  readonly rate: number;
  readonly timeoutMs: number;
  /** Keys in use at once; a key is retired after `opsPerKey` invocations (Jepsen's independent keys). */
  readonly keys: number;
  readonly opsPerKey: number;
  /** Whether the system supports compare-and-set. */
  readonly cas: boolean;
}

interface KeySlot {
  name: string;
  invocations: number;
  lastSeen: number | null;
}

/**
 * Jepsen's independent-register workload: concurrent workers, each bound to one node, issuing
 * read / write / cas on a small rotating set of keys. A timeout or lost connection is `info` and the
 * worker continues under a new process id; a definite refusal is `fail`.
 */
export class RegisterWorkload implements Workload {
  readonly counts: OpCounts = { ok: 0, fail: 0, info: 0 };
  private running = false;
  private workers: Promise<void>[] = [];
  private keys: KeySlot[] = [];
  /** Every key this schedule used (for the final reads). */
  private used: string[] = [];
  private prefix = '';
  private keySeq = 0;
  private valueSeq = 0;
  private readonly processes: number[] = [];
  private readonly abort = new AbortController();
  private readonly throttle: Throttle;

  constructor(
    private readonly system: SystemAdapter,
    private readonly cluster: ClusterView,
    private readonly history: History,
    private readonly rng: Rng,
    private readonly options: RegisterWorkloadOptions,
  ) {
    for (let w = 0; w < options.concurrency; w++) this.processes.push(w);
    this.throttle = new Throttle(options.rate, this.abort.signal);
  }

  /** Starts the workers on a fresh set of keys named after `prefix`. */
  start(prefix: string): void {
    if (this.running) throw new Error('workload already running');
    this.running = true;
    this.prefix = prefix;
    this.used = [];
    this.keys = Array.from({ length: this.options.keys }, () => this.newKey());
    this.workers = this.processes.map((_, w) => this.worker(w));
  }

  /** Stops issuing ops and waits for those in flight (each bounded by its timeout). */
  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.workers);
    this.workers = [];
  }

  /** Ends in-flight waits at once (Ctrl-C). */
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
  async finalReads(deadlineMs: number): Promise<number> {
    if (this.running) throw new Error('final reads while the workload runs');
    const nodes = this.cluster.nodes;
    const end = Date.now() + deadlineMs;
    const pending = [...this.used];
    let read = 0;
    const reader = async (w: number): Promise<void> => {
      let attempt = 0;
      let client: KvClient | undefined;
      let node = nodes[w % nodes.length];
      for (let key = pending.shift(); key !== undefined;) {
        if (Date.now() >= end || this.abort.signal.aborted) break;
        const c = (client ??= this.system.client(node, this.cluster, this.options.timeoutMs));
        const k = key;
        const result = await this.invoke(w, node, 'read', [k, null], () => c.read(k));
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

  private newKey(): KeySlot {
    const name = `${this.prefix}-k${this.keySeq++}`;
    this.used.push(name);
    return { name, invocations: 0, lastSeen: null };
  }

  private pickKey(): KeySlot {
    const i = this.rng.int(this.keys.length);
    let slot = this.keys[i];
    if (slot.invocations >= this.options.opsPerKey) {
      slot = this.newKey();
      this.keys[i] = slot;
    }
    slot.invocations++;
    return slot;
  }

  private async worker(w: number): Promise<void> {
    const nodes = this.cluster.nodes;
    const node = nodes[w % nodes.length];
    let client: KvClient | undefined;
    while (this.running) {
      await this.throttle.wait();
      if (!this.running) break;
      client ??= this.system.client(node, this.cluster, this.options.timeoutMs);
      const slot = this.pickKey();
      const choice = this.rng.int(this.options.cas ? 3 : 2);
      let f: 'read' | 'write' | 'cas';
      let value: unknown;
      let call: () => Promise<ClientResult>;
      const key = slot.name;
      if (choice === 0) {
        f = 'read';
        value = [key, null];
        call = () => client!.read(key);
      } else if (choice === 1) {
        f = 'write';
        const v = ++this.valueSeq;
        value = [key, v];
        call = () => client!.write(key, v);
      } else {
        f = 'cas';
        const expected = slot.lastSeen ?? this.rng.int(Math.max(1, this.valueSeq));
        const v = ++this.valueSeq;
        value = [key, [expected, v]];
        call = () => client!.cas(key, expected, v);
      }
      const result = await this.invoke(w, node, f, value, call);
      if (result.type === 'ok') {
        if (f === 'read') slot.lastSeen = result.value ?? null;
        else if (f === 'write') slot.lastSeen = (value as [string, number])[1];
        else slot.lastSeen = (value as [string, [number, number]])[1][1];
      } else if (result.type === 'fail') {
        // A node that refuses (down, not leader) is retried after a pause, not hammered.
        await sleep(FAIL_BACKOFF_MS, this.abort.signal);
      } else {
        await client.close().catch(() => undefined);
        client = undefined;
      }
    }
    await client?.close().catch(() => undefined);
  }

  /**
   * One operation by worker `w`'s process: records the invocation and its completion (a read's
   * value filled in), counts it, and retires the process when the outcome is indeterminate.
   */
  private async invoke(
    w: number,
    node: string,
    f: 'read' | 'write' | 'cas',
    value: unknown,
    call: () => Promise<ClientResult>,
  ): Promise<ClientResult> {
    const process = this.processes[w];
    this.history.record({ type: 'invoke', process, f, value, node });
    let result: ClientResult;
    try {
      result = await withTimeout(call(), this.options.timeoutMs + 500);
    } catch (error) {
      result = { type: 'info', error: error instanceof Error ? error.message : String(error) };
    }
    this.counts[result.type]++;
    if (result.type === 'ok') {
      const completed = f === 'read' ? [(value as [string, null])[0], result.value ?? null] : value;
      this.history.record({ type: 'ok', process, f, value: completed, node });
    } else {
      this.history.record({ type: result.type, process, f, value, node, error: result.error });
      // Jepsen: a process whose op is indeterminate is never reused.
      if (result.type === 'info') this.processes[w] = process + this.options.concurrency;
    }
    return result;
  }
}
