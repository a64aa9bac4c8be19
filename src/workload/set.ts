import type { Rng } from '../core/random.js';
import type {
  ClusterView,
  SetCapability,
  SetClient,
  SetReadResult,
  ClientResult,
} from '../systems/system.js';
import type { History } from './history.js';
import { type ClientOp, ClientWorkload } from './client-workload.js';

export interface SetWorkloadOptions {
  readonly concurrency: number;
  /** Total client ops per second across all workers. */
  readonly rate: number;
  readonly timeoutMs: number;
  /** Sets per schedule. */
  readonly keys: number;
  /** The share of ops that read a whole set (the rest add). */
  readonly readShare: number;
}

/** A few sets, mostly adds: Jepsen's set-full over independent keys. */
export const SET_DEFAULTS = { keys: 4, readShare: 0.25 } as const;

type SetOp = ClientOp<SetClient, SetReadResult | ClientResult>;

/**
 * Jepsen's set workload over a few keys: workers add elements (integers, unique across the
 * schedule) to a set picked at random, or read one whole set. The history records `add` as
 * `[key, element]` and `read` as `[key, null]`, completed with `[key, [elements…]]`. Checked by
 * `checkSet`: lost, unexpected and stale elements.
 */
export class SetWorkload extends ClientWorkload<SetClient, SetReadResult | ClientResult> {
  private keys: string[] = [];
  private element = 0;

  constructor(
    private readonly sets: SetCapability,
    cluster: ClusterView,
    history: History,
    private readonly rng: Rng,
    private readonly options: SetWorkloadOptions,
  ) {
    super(cluster, history, options);
  }

  protected connect(node: string): SetClient {
    return this.sets.client(node, this.cluster, this.options.timeoutMs);
  }

  protected begin(prefix: string): void {
    this.keys = Array.from({ length: this.options.keys }, (_, i) => `${prefix}-s${i}`);
  }

  protected usedKeys(): readonly string[] {
    return this.keys;
  }

  protected readOp(key: string): SetOp {
    return {
      f: 'read',
      value: [key, null],
      call: (client) => client.read(key),
      completed: (result) => [key, [...(result.value as readonly number[])].sort((a, b) => a - b)],
    };
  }

  protected nextOp(): SetOp {
    const key = this.keys[this.rng.int(this.keys.length)];
    if (this.rng.chance(this.options.readShare)) return this.readOp(key);
    const element = this.element++;
    const value = [key, element];
    return { f: 'add', value, call: (client) => client.add(key, element), completed: () => value };
  }
}
