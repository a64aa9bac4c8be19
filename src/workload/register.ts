import type { Rng } from '../core/random.js';
import type { ClientResult, ClusterView, KvClient, SystemAdapter } from '../systems/system.js';
import type { History } from './history.js';
import { type ClientOp, ClientWorkload } from './client-workload.js';

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

type RegisterOp = ClientOp<KvClient, ClientResult>;

/**
 * Jepsen's independent-register workload: concurrent workers, each bound to one node, issuing
 * read / write / cas on a small rotating set of keys (the worker lifecycle is `ClientWorkload`'s).
 */
export class RegisterWorkload extends ClientWorkload<KvClient, ClientResult> {
  private keys: KeySlot[] = [];
  /** Every key this schedule used (for the final reads). */
  private used: string[] = [];
  private prefix = '';
  private keySeq = 0;
  private valueSeq = 0;

  constructor(
    private readonly system: SystemAdapter,
    cluster: ClusterView,
    history: History,
    private readonly rng: Rng,
    private readonly options: RegisterWorkloadOptions,
  ) {
    super(cluster, history, options);
  }

  protected connect(node: string): KvClient {
    return this.system.client(node, this.cluster, this.options.timeoutMs);
  }

  protected begin(prefix: string): void {
    this.prefix = prefix;
    this.used = [];
    this.keys = Array.from({ length: this.options.keys }, () => this.newKey());
  }

  protected usedKeys(): readonly string[] {
    return this.used;
  }

  protected readOp(key: string): RegisterOp {
    return {
      f: 'read',
      value: [key, null],
      call: (client) => client.read(key),
      completed: (result) => [key, result.value ?? null],
    };
  }

  protected nextOp(): RegisterOp {
    const slot = this.pickKey();
    const key = slot.name;
    const choice = this.rng.int(this.options.cas ? 3 : 2);
    if (choice === 0) {
      return {
        ...this.readOp(key),
        settled: (result) => {
          if (result.type === 'ok') slot.lastSeen = result.value ?? null;
        },
      };
    }
    const remember =
      (v: number) =>
      (result: ClientResult): void => {
        if (result.type === 'ok') slot.lastSeen = v;
      };
    if (choice === 1) {
      const v = ++this.valueSeq;
      const value = [key, v];
      return {
        f: 'write',
        value,
        call: (client) => client.write(key, v),
        completed: () => value,
        settled: remember(v),
      };
    }
    const expected = slot.lastSeen ?? this.rng.int(Math.max(1, this.valueSeq));
    const v = ++this.valueSeq;
    const value = [key, [expected, v]];
    return {
      f: 'cas',
      value,
      call: (client) => client.cas(key, expected, v),
      completed: () => value,
      settled: remember(v),
    };
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
}
