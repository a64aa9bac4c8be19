import type { Model } from '../model.js';
import { LinearizedSet } from './linearized-set.js';
import { MemoCache } from './memo-cache.js';
import { INFO, OK, PENDING, type Partition } from './partition.js';
import { StateTable } from './state-table.js';

const CLOCK_CHECK_EVERY = 1024;
const HEAD = 0;

/** The verdict on one partition; when not linearizable, the deepest point the search reached. */
export type PartitionVerdict =
  | { readonly valid: true; readonly cacheEntries: number }
  | { readonly valid: 'unknown'; readonly cacheEntries: number }
  | {
      readonly valid: false;
      readonly cacheEntries: number;
      /** Slots linearized, in order, at the deepest point. */
      readonly prefix: readonly number[];
      /** The slot whose return was reached with no way to linearize it. */
      readonly failing: number;
      readonly stateBefore: string;
    };

/**
 * Wing & Gong / Lowe backtracking over a doubly linked list of call and return entries (node
 * `2 * slot + 1` is a call, `2 * slot + 2` its return; 0 is the head and `2 * n + 1` the tail),
 * memoizing (linearized set, state). `info` ops return at +infinity and need not be linearized.
 */
export function searchPartition<S, I, O>(
  partition: Partition<I, O>,
  model: Model<S, I, O>,
  deadlineMs: number,
): PartitionVerdict {
  const n = partition.size;
  const status = partition.status.data;
  const inputs = partition.inputs;
  const outputs = partition.outputs;

  const bit = new Int32Array(n);
  const included = new Uint8Array(n);
  let required = 0;
  let infos = 0;
  for (let slot = 0; slot < n; slot++) {
    const s = status[slot];
    if (s === OK) {
      bit[slot] = required++;
      included[slot] = 1;
    } else if (s === INFO || s === PENDING) {
      infos++;
      included[slot] = 2;
    }
  }
  const set = new LinearizedSet(required, infos);
  let infoIndex = 0;
  for (let slot = 0; slot < n; slot++) if (included[slot] === 2) bit[slot] = set.infoBit(infoIndex++);

  const tail = 2 * n + 1;
  const next = new Int32Array(2 * n + 2);
  const prev = new Int32Array(2 * n + 2);
  let last = HEAD;
  const link = (node: number): void => {
    next[last] = node;
    prev[node] = last;
    last = node;
  };
  const events = partition.events.data;
  for (let e = 0; e < partition.events.length; e++) {
    const event = events[e];
    if (included[event >>> 1] !== 0) link(event + 1);
  }
  for (let slot = 0; slot < n; slot++) if (included[slot] === 2) link(2 * slot + 2);
  link(tail);

  const states = new StateTable(model);
  const cache = new MemoCache();
  const stackSlot = new Int32Array(required + infos);
  const stackState: S[] = [];
  const stackStateId = new Int32Array(required + infos);
  let depth = 0;
  let state = model.init();
  let stateId = states.id(state);
  let remaining = required;

  const best = new Int32Array(required + infos);
  let bestDepth = 0;
  let bestScore = -1;
  let clean = 0;
  let failing = -1;
  let failingState = state;

  // Each level scans the candidates twice: required ops first, then info ops, so configurations
  // with few info ops are memoized first and dominate those with more.
  const stackPhase = new Uint8Array(required + infos);
  let phase = 0;
  let iterations = 0;
  let entry = next[HEAD];
  while (remaining > 0) {
    if (++iterations % CLOCK_CHECK_EVERY === 0 && performance.now() > deadlineMs) {
      return { valid: 'unknown', cacheEntries: cache.size };
    }
    if (entry === tail) throw new Error('linearizability search ran off the entry list');
    if ((entry & 1) === 1) {
      const slot = (entry - 1) >>> 1;
      if ((included[slot] === 2) !== (phase === 1)) {
        entry = next[entry];
        continue;
      }
      const after = model.step(state, inputs[slot], outputs[slot]);
      if (after !== undefined) {
        const afterId = states.id(after);
        set.add(bit[slot]);
        if (cache.add(set, afterId)) {
          stackSlot[depth] = slot;
          stackState[depth] = state;
          stackStateId[depth] = stateId;
          stackPhase[depth] = phase;
          depth++;
          phase = 0;
          state = after;
          stateId = afterId;
          if (included[slot] === 1) remaining--;
          const ret = entry + 1;
          next[prev[entry]] = next[entry];
          prev[next[entry]] = prev[entry];
          next[prev[ret]] = next[ret];
          prev[next[ret]] = prev[ret];
          entry = next[HEAD];
          continue;
        }
        set.remove(bit[slot]);
      }
      entry = next[entry];
      continue;
    }
    if (phase === 0 && infos > 0) {
      phase = 1;
      entry = next[HEAD];
      continue;
    }
    // The deepest point counts required ops; among equals, the one with the fewest info ops.
    const done = required - remaining;
    const score = done * (infos + 1) + infos - (depth - done);
    if (score > bestScore) {
      bestScore = score;
      best.set(stackSlot.subarray(clean, depth), clean);
      bestDepth = depth;
      clean = depth;
      failing = (entry - 2) >>> 1;
      failingState = state;
    }
    if (depth === 0) break;
    depth--;
    if (depth < clean) clean = depth;
    const slot = stackSlot[depth];
    state = stackState[depth];
    stateId = stackStateId[depth];
    phase = stackPhase[depth];
    set.remove(bit[slot]);
    if (included[slot] === 1) remaining++;
    const call = 2 * slot + 1;
    const ret = call + 1;
    next[prev[ret]] = ret;
    prev[next[ret]] = ret;
    next[prev[call]] = call;
    prev[next[call]] = call;
    entry = next[call];
  }
  if (remaining === 0) return { valid: true, cacheEntries: cache.size };
  return {
    valid: false,
    cacheEntries: cache.size,
    prefix: Array.from(best.subarray(0, bestDepth)),
    failing,
    stateBefore: model.describe(failingState),
  };
}
