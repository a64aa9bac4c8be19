import type { Op } from '../../src/core/op.js';
import { Rng } from '../../src/core/random.js';

export interface KvHistoryOptions {
  readonly seed: number;
  /** Client ops to invoke. */
  readonly ops: number;
  readonly clients: number;
  readonly keys: number;
  /** Values written are drawn from [0, values). */
  readonly values?: number;
  /** Chance an op ends `info` (taking effect or not, at random). */
  readonly infoRate?: number;
  /** Longest invoke→effect and effect→completion delay, and longest think time, in ns. */
  readonly latencyNs?: number;
  /** false: plain register values (`v`, cas `[old, new]`) for a single key. */
  readonly kv?: boolean;
  /**
   * Every write and cas writes a value never written before (1, 2, 3, …), as the register workload
   * does; a cas expects the value its client last saw, or some earlier value. `values` is then unused.
   */
  readonly uniqueValues?: boolean;
  /** Chance an op is a read, a write, else a cas. Default 0.5 and 0.35. */
  readonly readRate?: number;
  readonly writeRate?: number;
}

const READ = 0;
const WRITE = 1;
const CAS = 2;
const F_NAMES = ['read', 'write', 'cas'] as const;

/** Heap of pending events ordered by (time, sequence), packed in parallel arrays. */
class EventQueue {
  private readonly times: number[] = [];
  private readonly seqs: number[] = [];
  private readonly payloads: number[] = [];
  private seq = 0;

  get size(): number {
    return this.times.length;
  }

  push(time: number, payload: number): void {
    const times = this.times;
    let i = times.length;
    times.push(time);
    this.seqs.push(this.seq++);
    this.payloads.push(payload);
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.less(i, parent)) break;
      this.swap(i, parent);
      i = parent;
    }
  }

  /** Removes the earliest event; returns [time, payload]. */
  pop(): [number, number] {
    const top: [number, number] = [this.times[0], this.payloads[0]];
    const last = this.times.length - 1;
    this.swap(0, last);
    this.times.pop();
    this.seqs.pop();
    this.payloads.pop();
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < this.times.length && this.less(l, m)) m = l;
      if (r < this.times.length && this.less(r, m)) m = r;
      if (m === i) return top;
      this.swap(i, m);
      i = m;
    }
  }

  private less(a: number, b: number): boolean {
    return this.times[a] < this.times[b] || (this.times[a] === this.times[b] && this.seqs[a] < this.seqs[b]);
  }

  private swap(a: number, b: number): void {
    [this.times[a], this.times[b]] = [this.times[b], this.times[a]];
    [this.seqs[a], this.seqs[b]] = [this.seqs[b], this.seqs[a]];
    [this.payloads[a], this.payloads[b]] = [this.payloads[b], this.payloads[a]];
  }
}

/**
 * A history of a real sequential execution: each client's op takes effect at a random instant
 * between its invoke and its completion, against one register per key, so the history is
 * linearizable by construction. Ops stream out in time order; memory is O(clients + keys).
 */
export function* generateKvHistory(options: KvHistoryOptions): Generator<Op> {
  const rng = new Rng(options.seed);
  const { clients, keys } = options;
  const values = options.values ?? 5;
  const infoRate = options.infoRate ?? 0;
  const latency = options.latencyNs ?? 1000;
  const kv = options.kv ?? true;
  const uniqueValues = options.uniqueValues ?? false;
  const readRate = options.readRate ?? 0.5;
  const writeRate = options.writeRate ?? 0.35;
  let lastValue = 0;
  const lastSeen: (number | null)[] = new Array<number | null>(clients).fill(null);
  const registers: (number | null)[] = new Array<number | null>(keys).fill(null);
  const process = Array.from({ length: clients }, (_, c) => c);
  const f = new Int8Array(clients);
  const key = new Int32Array(clients);
  const a = new Int32Array(clients);
  const b = new Int32Array(clients);
  const info = new Uint8Array(clients);
  const effect = new Uint8Array(clients);
  const readResult: (number | null)[] = new Array<number | null>(clients).fill(null);
  const casOk = new Uint8Array(clients);
  const queue = new EventQueue();
  const INVOKE = 0;
  const EFFECT = 1;
  const COMPLETE = 2;
  for (let c = 0; c < clients; c++) queue.push(rng.int(latency), c * 3 + INVOKE);
  let invoked = 0;
  let index = 0;
  const valueOf = (c: number, v: unknown): unknown => (kv ? [`k${key[c]}`, v] : v);
  while (queue.size > 0) {
    const [time, payload] = queue.pop();
    const c = Math.floor(payload / 3);
    const kind = payload % 3;
    if (kind === INVOKE) {
      if (invoked >= options.ops) continue;
      invoked++;
      const roll = rng.next();
      f[c] = roll < readRate ? READ : roll < readRate + writeRate ? WRITE : CAS;
      key[c] = rng.int(keys);
      a[c] = rng.int(values);
      b[c] = rng.int(values);
      if (uniqueValues) {
        const seen = lastSeen[c];
        a[c] =
          f[c] === WRITE ? ++lastValue : seen !== null && rng.chance(0.7) ? seen : rng.int(lastValue + 1);
        b[c] = f[c] === CAS ? ++lastValue : 0;
      }
      info[c] = rng.chance(infoRate) ? 1 : 0;
      effect[c] = info[c] === 1 ? (rng.chance(0.5) ? 1 : 0) : 1;
      const v = f[c] === READ ? null : f[c] === WRITE ? a[c] : [a[c], b[c]];
      yield {
        index: index++,
        time,
        type: 'invoke',
        process: process[c],
        f: F_NAMES[f[c]],
        value: valueOf(c, v),
      };
      const at = time + 1 + rng.int(latency);
      queue.push(at, c * 3 + EFFECT);
      queue.push(at + 1 + rng.int(latency), c * 3 + COMPLETE);
    } else if (kind === EFFECT) {
      if (effect[c] === 0) continue;
      const k = key[c];
      if (f[c] === READ) readResult[c] = registers[k];
      else if (f[c] === WRITE) registers[k] = a[c];
      else {
        casOk[c] = registers[k] === a[c] ? 1 : 0;
        if (casOk[c] === 1) registers[k] = b[c];
      }
      if (info[c] === 0) lastSeen[c] = f[c] === READ ? readResult[c] : f[c] === WRITE ? a[c] : registers[k];
    } else {
      const fName = F_NAMES[f[c]];
      if (info[c] === 1) {
        yield { index: index++, time, type: 'info', process: process[c], f: fName, value: valueOf(c, null) };
        process[c] += clients;
      } else if (f[c] === READ) {
        yield {
          index: index++,
          time,
          type: 'ok',
          process: process[c],
          f: fName,
          value: valueOf(c, readResult[c]),
        };
      } else if (f[c] === WRITE) {
        yield { index: index++, time, type: 'ok', process: process[c], f: fName, value: valueOf(c, a[c]) };
      } else {
        const type = casOk[c] === 1 ? 'ok' : 'fail';
        yield { index: index++, time, type, process: process[c], f: fName, value: valueOf(c, [a[c], b[c]]) };
      }
      queue.push(time + rng.int(latency), c * 3 + INVOKE);
    }
  }
}
