/**
 * The linearizability search as it stood before the unique-value pruning (commit 2ec5c7a), kept
 * unchanged as an oracle: property tests check that the current search gives the same verdicts.
 * Do not optimise it.
 */
import type { Model } from '../../src/check/model.js';
import { LinearizedSet } from '../../src/check/_internals/linearized-set.js';
import { MemoCache } from '../../src/check/_internals/memo-cache.js';
import { INFO, OK, PENDING, type PartitionData } from '../../src/check/_internals/partition.js';
import { StateTable } from '../../src/check/_internals/state-table.js';

/**
 * A text equal for equal inputs: defined only for primitives and plain objects and arrays of them,
 * where JSON is faithful; undefined otherwise (a Map, a class instance), so such inputs are never
 * taken as equal.
 */
function inputKey(input: unknown): string | undefined {
  return isPlain(input) ? JSON.stringify(input) : undefined;
}

function isPlain(value: unknown): boolean {
  if (value === null) return true;
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return true;
    case 'number':
      return Number.isFinite(value);
    case 'object': {
      if (Array.isArray(value)) return value.every(isPlain);
      const proto: unknown = Object.getPrototypeOf(value);
      return (proto === Object.prototype || proto === null) && Object.values(value).every(isPlain);
    }
    default:
      return false;
  }
}

const CLOCK_CHECK_EVERY = 1024;
const HEAD = 0;
const REQUIRED = 1;
const OPTIONAL = 2;
/**
 * Phases of one search level: required ops are tried first; then info ops after which the op
 * blocking the level (the first return) could take effect; then the other info ops.
 */
const REQUIRED_PHASE = 0;
const ENABLING_PHASE = 1;
const INFO_PHASE = 2;

/** The verdict on one partition; when not linearizable, the deepest point the search reached. */

export type PartitionVerdict =
  | {
      readonly valid: true;
      readonly cacheEntries: number;
      /** With `keepOrder`: the linearization found (slots in order) and the state after it. */
      readonly order?: readonly number[];
      readonly stateAfter?: string;
    }
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
 * Wing & Gong / Lowe backtracking with memoization of (linearized set, state).
 *
 * Completed ops sit in a doubly linked list of call and return entries in history order (node
 * `2 * slot + 1` is a call, `2 * slot + 2` its return; 0 is the head, `2 * n + 1` the tail); the
 * candidates at each level are the calls before the first return. `info` ops return at +infinity
 * and need not be linearized: they are candidates when invoked before that first return, and
 * those with equal inputs are tried once (see below). Each level tries required ops first, then
 * the info ops that let the blocking op (the first return) take effect, then the other info ops:
 * configurations with fewer info ops are memoized first and dominate (see MemoCache), and an info
 * op that a read needs is found at once.
 */
export function referenceSearch<S, I, O>(
  partition: PartitionData<I, O>,
  model: Model<S, I, O>,
  deadlineMs: number,
  keepOrder = false,
): PartitionVerdict {
  const n = partition.size;
  const status = partition.status;
  const inputs = partition.inputs;
  const outputs = partition.outputs;
  const invokePos = partition.invokePos;
  const completePos = partition.completePos;

  const bit = new Int32Array(n);
  const kind = new Uint8Array(n);
  let required = 0;
  let infos = 0;
  for (let slot = 0; slot < n; slot++) {
    const s = status[slot];
    if (s === OK) {
      bit[slot] = required++;
      kind[slot] = REQUIRED;
    } else if (s === INFO || s === PENDING) {
      infos++;
      kind[slot] = OPTIONAL;
    }
  }

  const tail = 2 * n + 1;
  const next = new Int32Array(2 * n + 2);
  const prev = new Int32Array(2 * n + 2);
  let last = HEAD;
  const events = partition.events;
  for (let e = 0; e < events.length; e++) {
    const node = events[e] + 1;
    if (kind[(node - 1) >>> 1] !== REQUIRED) continue;
    next[last] = node;
    prev[node] = last;
    last = node;
  }
  next[last] = tail;
  prev[tail] = last;

  // Info ops with equal inputs are interchangeable once both are invoked (both return at
  // +infinity), so they form groups and only a group's earliest unlinearized op is a candidate.
  // Each group is a circular list of its ops in invoke order: node `slot`, sentinel `n + group`.
  const groupOf = new Int32Array(n);
  const groupByKey = new Map<string, number>();
  let groups = 0;
  for (let slot = 0; slot < n; slot++) {
    if (kind[slot] !== OPTIONAL) continue;
    const key = inputKey(inputs[slot]);
    let group = key === undefined ? undefined : groupByKey.get(key);
    if (group === undefined) {
      group = groups++;
      if (key !== undefined) groupByKey.set(key, group);
    }
    groupOf[slot] = group;
  }
  const memberNext = new Int32Array(n + groups);
  const memberPrev = new Int32Array(n + groups);
  for (let g = 0; g < groups; g++) memberNext[n + g] = memberPrev[n + g] = n + g;
  const set = new LinearizedSet(required, groups);
  for (let slot = 0; slot < n; slot++) {
    if (kind[slot] !== OPTIONAL) continue;
    const sentinel = n + groupOf[slot];
    const lastMember = memberPrev[sentinel];
    memberNext[lastMember] = slot;
    memberPrev[slot] = lastMember;
    memberNext[slot] = sentinel;
    memberPrev[sentinel] = slot;
  }

  const states = new StateTable(model);
  const cache = new MemoCache();
  const levels = required + infos;
  const stackSlot = new Int32Array(levels);
  const stackState: S[] = [];
  const stackStateId = new Int32Array(levels);
  const stackPhase = new Uint8Array(levels);
  let depth = 0;
  let state = model.init();
  let stateId = states.id(state);
  let remaining = required;

  const best = new Int32Array(levels);
  let bestDepth = 0;
  let bestScore = -1;
  let clean = 0;
  let failing = -1;
  let failingState = state;

  /** The first return in the list: info ops invoked before it are candidates. */
  let firstReturn = HEAD;
  const findFirstReturn = (): number => {
    let node = next[HEAD];
    while ((node & 1) === 1) node = next[node];
    return node;
  };

  let phase = REQUIRED_PHASE;
  let entry = next[HEAD];
  let iterations = 0;
  while (remaining > 0) {
    if (++iterations % CLOCK_CHECK_EVERY === 0 && performance.now() > deadlineMs) {
      return { valid: 'unknown', cacheEntries: cache.size };
    }
    let slot = -1;
    if (phase === REQUIRED_PHASE) {
      if (entry === tail) throw new Error('linearizability search ran off the entry list');
      if ((entry & 1) === 0) {
        firstReturn = entry;
        phase = ENABLING_PHASE;
        entry = 0;
        continue;
      }
      slot = (entry - 1) >>> 1;
    } else {
      // In the info phases, `entry` is a group index.
      const blocking = (firstReturn - 2) >>> 1;
      const boundary = completePos[blocking];
      const wantEnabling = phase === ENABLING_PHASE;
      while (entry < groups) {
        const first = memberNext[n + entry];
        if (first < n && invokePos[first] < boundary) {
          const after = model.step(state, inputs[first], outputs[first]);
          const enables =
            after !== undefined && model.step(after, inputs[blocking], outputs[blocking]) !== undefined;
          if (enables === wantEnabling && after !== undefined) {
            slot = first;
            break;
          }
        }
        entry++;
      }
      if (slot < 0 && wantEnabling) {
        phase = INFO_PHASE;
        entry = 0;
        continue;
      }
    }

    if (slot >= 0) {
      const after = model.step(state, inputs[slot], outputs[slot]);
      if (after !== undefined) {
        const afterId = states.id(after);
        if (phase === REQUIRED_PHASE) set.add(bit[slot]);
        else set.addInfo(groupOf[slot]);
        if (cache.add(set, afterId)) {
          stackSlot[depth] = slot;
          stackState[depth] = state;
          stackStateId[depth] = stateId;
          stackPhase[depth] = phase;
          depth++;
          state = after;
          stateId = afterId;
          if (phase === REQUIRED_PHASE) {
            remaining--;
            const ret = entry + 1;
            next[prev[entry]] = next[entry];
            prev[next[entry]] = prev[entry];
            next[prev[ret]] = next[ret];
            prev[next[ret]] = prev[ret];
          } else {
            memberNext[memberPrev[slot]] = memberNext[slot];
            memberPrev[memberNext[slot]] = memberPrev[slot];
          }
          phase = REQUIRED_PHASE;
          entry = next[HEAD];
          continue;
        }
        if (phase === REQUIRED_PHASE) set.remove(bit[slot]);
        else set.removeInfo(groupOf[slot]);
      }
      entry = phase === REQUIRED_PHASE ? next[entry] : entry + 1;
      continue;
    }

    // Every candidate failed at this level: note the deepest point, then backtrack. The deepest
    // point counts required ops; among equals, the one with the fewest info ops.
    const done = required - remaining;
    const score = done * (infos + 1) + infos - (depth - done);
    if (score > bestScore) {
      bestScore = score;
      best.set(stackSlot.subarray(clean, depth), clean);
      bestDepth = depth;
      clean = depth;
      failing = (firstReturn - 2) >>> 1;
      failingState = state;
    }
    if (depth === 0) break;
    depth--;
    if (depth < clean) clean = depth;
    const popped = stackSlot[depth];
    state = stackState[depth];
    stateId = stackStateId[depth];
    phase = stackPhase[depth];
    if (phase === REQUIRED_PHASE) {
      set.remove(bit[popped]);
      remaining++;
      const call = 2 * popped + 1;
      const ret = call + 1;
      next[prev[ret]] = ret;
      prev[next[ret]] = ret;
      next[prev[call]] = call;
      prev[next[call]] = call;
      entry = next[call];
    } else {
      set.removeInfo(groupOf[popped]);
      memberNext[memberPrev[popped]] = popped;
      memberPrev[memberNext[popped]] = popped;
      entry = groupOf[popped] + 1;
      firstReturn = findFirstReturn();
    }
  }
  if (remaining === 0) {
    if (!keepOrder) return { valid: true, cacheEntries: cache.size };
    const order = Array.from(stackSlot.subarray(0, depth));
    return { valid: true, cacheEntries: cache.size, order, stateAfter: model.describe(state) };
  }
  return {
    valid: false,
    cacheEntries: cache.size,
    prefix: Array.from(best.subarray(0, bestDepth)),
    failing,
    stateBefore: model.describe(failingState),
  };
}
