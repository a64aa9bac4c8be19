/**
 * A workload as a user writes one, the example of docs/writing-a-workload.md: counters only ever
 * go up, so a read of a counter must never return less than a read of it that had ended before
 * this one began. Workers add 1–3 to one of a few counters or read one, through the system's
 * counter client (kvraft's atomic add, Redis's INCRBY); the check walks the history once.
 *
 *   mallory run --workload examples/workloads/monotonic-counter.ts --time 60s
 *   mallory run --workload examples/workloads/monotonic-counter.ts --bug stale-read \
 *     --schedule test/systems/kvraft/schedules/stale-read.jsonl --steps 8
 *
 * In your own project, import from 'mallory' instead of the relative path.
 */
import {
  ClientWorkload,
  type ClientOp,
  type ClientResult,
  type ClusterView,
  type CounterCapability,
  type CounterClient,
  type History,
  type Op,
  type Rng,
  type WorkloadDefinition,
  type WorkloadVerdict,
} from '../../src/index.js';

/** Counters per schedule, the largest add, and the share of ops that read. */
const KEYS = 3;
const MAX_DELTA = 3;
const READ_SHARE = 0.5;
/** How many violations the message names (the evidence keeps them all). */
const NAMED = 3;

type CounterOp = ClientOp<CounterClient, ClientResult>;

/**
 * The client side. `ClientWorkload` runs the workers (one per `concurrency`, each bound to a node,
 * paced to `rate`) and records every op in the history: the invocation with `value`, then its
 * completion — `ok` with what `completed` returns, or `fail` / `info` with the client's error.
 */
class MonotonicCounterWorkload extends ClientWorkload<CounterClient, ClientResult> {
  private keys: string[] = [];

  constructor(
    private readonly counters: CounterCapability,
    cluster: ClusterView,
    history: History,
    private readonly rng: Rng,
    private readonly timeoutMs: number,
    pacing: { concurrency: number; rate: number },
  ) {
    super(cluster, history, { ...pacing, timeoutMs });
  }

  protected connect(node: string): CounterClient {
    return this.counters.client(node, this.cluster, this.timeoutMs);
  }

  /** Each schedule gets fresh counters, named after its prefix (`s0-m0`, …). */
  protected begin(prefix: string): void {
    this.keys = Array.from({ length: KEYS }, (_, i) => `${prefix}-m${i}`);
  }

  protected usedKeys(): readonly string[] {
    return this.keys;
  }

  /** A read is recorded as `[key, null]` and completed as `[key, count]`. */
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
    if (this.rng.chance(READ_SHARE)) return this.readOp(key);
    const delta = this.rng.range(1, MAX_DELTA);
    const value = [key, delta];
    return { f: 'add', value, call: (client) => client.add(key, delta), completed: () => value };
  }
}

interface Read {
  readonly process: Op['process'];
  readonly invoked: number;
  readonly completed: number;
  readonly node: string | undefined;
  readonly count: number;
}

interface Violation {
  readonly key: string;
  readonly earlier: Read;
  readonly later: Read;
}

function describe(v: Violation): string {
  const { earlier: e, later: l } = v;
  return (
    `counter ${JSON.stringify(v.key)}: process ${String(l.process)}'s read (op ${l.invoked}, ok at op ${l.completed}` +
    `${l.node ? ` on ${l.node}` : ''}) saw ${l.count}, but process ${String(e.process)}'s read (op ${e.invoked}, ` +
    `ok at op ${e.completed}${e.node ? ` on ${e.node}` : ''}), which ended before it began, had seen ${e.count}`
  );
}

/**
 * The check: per counter, the largest count among the reads completed so far; a read that began
 * after such a read and returns less went back in time. One pass over the history, in its order
 * (the order things happened).
 */
export function checkMonotonicReads(history: readonly Op[]): WorkloadVerdict {
  /** Per key, the completed read with the largest count so far. */
  const highest = new Map<string, Read>();
  /** Per process with a read in flight: its invocation, and the highest read when it began. */
  const pending = new Map<Op['process'], { invoked: Op; floor: Read | undefined }>();
  const violations: Violation[] = [];
  let reads = 0;
  for (const op of history) {
    if (op.f !== 'read') continue;
    const [key, count] = op.value as [string, number | null];
    if (op.type === 'invoke') {
      pending.set(op.process, { invoked: op, floor: highest.get(key) });
      continue;
    }
    const started = pending.get(op.process);
    pending.delete(op.process);
    if (op.type !== 'ok' || started === undefined || count === null) continue;
    reads++;
    const read: Read = {
      process: op.process,
      invoked: started.invoked.index,
      completed: op.index,
      node: op.node,
      count,
    };
    if (started.floor !== undefined && count < started.floor.count) {
      violations.push({ key, earlier: started.floor, later: read });
    }
    if (count > (highest.get(key)?.count ?? -1)) highest.set(key, read);
  }
  if (violations.length === 0) return { valid: true };
  const more = violations.length > NAMED ? ` (and ${violations.length - NAMED} more)` : '';
  return {
    valid: false,
    name: 'read-went-down',
    message: `${violations.length} of ${reads} counter reads went down: ${violations
      .slice(0, NAMED)
      .map(describe)
      .join('; ')}${more}`,
    evidence: { reads, violations },
  };
}

export const workload: WorkloadDefinition = {
  name: 'monotonic-counter',
  unsupported: (system) =>
    system.counters === undefined ? 'keeps no counters (a counter client with an atomic add)' : undefined,
  create: ({ system, cluster, history, rng, concurrency, rate, timeoutMs }) =>
    new MonotonicCounterWorkload(system.counters!, cluster, history, rng, timeoutMs, { concurrency, rate }),
  check: (history) => checkMonotonicReads(history),
};
