import type { ClientResult } from '../systems/system.js';
import type { SimKvraft } from './kvraft.js';

export interface WorkloadOptions {
  /** Virtual time the workload runs. */
  readonly durationMs: number;
  /** Clients, each one operation at a time. */
  readonly clients: number;
  /** Pause between a client's operations, uniform in [0, gap] ms. */
  readonly gapMs: number;
  /** Keys the operations pick from. */
  readonly keys: number;
  /** A random fault (kill and restart, power loss, isolation, pause) every this many ms; 0: none. */
  readonly faultEveryMs: number;
}

export interface WorkloadOp {
  readonly client: number;
  readonly startMs: number;
  readonly endMs: number;
  readonly f: 'read' | 'write' | 'cas';
  readonly key: string;
  readonly value: number | null;
  readonly result: ClientResult;
}

const CLIENT_TIMEOUT_MS = 1000;
/** How long a fault lasts before it is undone. */
const FAULT_MS = 1500;

/**
 * Random reads, writes and compare-and-sets from concurrent clients against a running simulated
 * cluster, with random faults if asked, all drawn from the world's generator: the history is a
 * function of the seed. Every operation is also recorded in the world's digest.
 */
export async function runWorkload(sim: SimKvraft, options: WorkloadOptions): Promise<WorkloadOp[]> {
  const world = sim.world;
  const rng = world.rng.fork('workload');
  const end = world.nowMs + options.durationMs;
  const history: WorkloadOp[] = [];
  let next = 0;
  const client = async (id: number): Promise<void> => {
    while (world.nowMs < end) {
      const node = rng.pick(sim.nodes);
      const conn = sim.clientOf(node, CLIENT_TIMEOUT_MS);
      const key = `k${rng.int(options.keys)}`;
      const f = rng.pick(['read', 'write', 'cas'] as const);
      const value = ++next;
      const startMs = world.nowMs;
      const result =
        f === 'read'
          ? await conn.read(key)
          : f === 'write'
            ? await conn.write(key, value)
            : await conn.cas(key, value - 1, value);
      await conn.close();
      const op: WorkloadOp = { client: id, startMs, endMs: world.nowMs, f, key, value, result };
      history.push(op);
      world.record(`op ${JSON.stringify(op)}`);
      await sim.sleep(rng.next() * options.gapMs);
    }
  };
  const nemesis = async (): Promise<void> => {
    if (options.faultEveryMs <= 0) return;
    while (world.nowMs + options.faultEveryMs < end) {
      await sim.sleep(options.faultEveryMs);
      const node = rng.pick(sim.nodes);
      const fault = rng.pick(['kill', 'power-loss', 'isolate', 'pause'] as const);
      world.record(`fault ${fault} ${node}`);
      if (fault === 'kill') sim.kill(node);
      else if (fault === 'power-loss') world.powerLoss(node);
      else if (fault === 'isolate') sim.isolate(node);
      else world.pause(node);
      await sim.sleep(FAULT_MS);
      if (fault === 'isolate') sim.heal();
      else if (fault === 'pause') world.resume(node);
      else sim.start(node);
    }
  };
  const done = Promise.all([...Array.from({ length: options.clients }, (_, i) => client(i)), nemesis()]);
  await world.settle(done, options.durationMs + FAULT_MS + CLIENT_TIMEOUT_MS * 2);
  return history;
}
