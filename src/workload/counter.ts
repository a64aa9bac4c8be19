import type { Rng } from '../core/random.js';
import type { ClientResult, ClusterView, CounterCapability, CounterClient } from '../systems/system.js';
import type { History } from './history.js';
import { type ClientOp, ClientWorkload } from './client-workload.js';

export interface CounterWorkloadOptions {
  readonly concurrency: number;
  /** Total client ops per second across all workers. */
  readonly rate: number;
  readonly timeoutMs: number;
  /** Counters per schedule. */
  readonly keys: number;
  /** Adds carry 1 … this much. */
  readonly maxDelta: number;
  /** The share of ops that read (the rest add). */
  readonly readShare: number;
}

export const COUNTER_DEFAULTS = { keys: 2, maxDelta: 5, readShare: 0.5 } as const;

type CounterOp = ClientOp<CounterClient, ClientResult>;

/**
 * Jepsen's counter workload over a few keys: workers add a small positive delta to a counter or
 * read it. The history records `add` as `[key, delta]` and `read` as `[key, null]`, completed with
 * `[key, count]`. Checked by `checkCounter`: every read between the acknowledged and the attempted
 * sums around it.
 */
export class CounterWorkload extends ClientWorkload<CounterClient, ClientResult> {
  private keys: string[] = [];

  constructor(
    private readonly counters: CounterCapability,
    cluster: ClusterView,
    history: History,
    private readonly rng: Rng,
    private readonly options: CounterWorkloadOptions,
  ) {
    super(cluster, history, options);
  }

  protected connect(node: string): CounterClient {
    return this.counters.client(node, this.cluster, this.options.timeoutMs);
  }

  protected begin(prefix: string): void {
    this.keys = Array.from({ length: this.options.keys }, (_, i) => `${prefix}-c${i}`);
  }

  protected usedKeys(): readonly string[] {
    return this.keys;
  }

  protected readOp(key: string): CounterOp {
    return {
      f: 'read',
      value: [key, null],
      call: (client) => client.read(key),
      completed: (result) => [key, result.value ?? 0],
    };
  }

  protected nextOp(): CounterOp {
    const key = this.keys[this.rng.int(this.keys.length)];
    if (this.rng.chance(this.options.readShare)) return this.readOp(key);
    const delta = this.rng.range(1, this.options.maxDelta);
    const value = [key, delta];
    return { f: 'add', value, call: (client) => client.add(key, delta), completed: () => value };
  }
}
