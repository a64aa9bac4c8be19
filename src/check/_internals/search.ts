import type { Model } from '../model.js';
import { LinearizedSet } from './linearized-set.js';
import { MemoCache } from './memo-cache.js';
import { MemoryLimitReached, type MemoryLimits, NO_MEMORY_LIMIT } from '../../core/memory-limit.js';
import { INFO, OK, PENDING, type PartitionData } from './partition.js';
import { StateSupply } from './state-supply.js';
import { MAX_STATES, StateTable } from './state-table.js';
import { intArrays } from './int-arrays.js';
import { ValueIds } from './value-ids.js';

const CLOCK_CHECK_EVERY = 1024;
/** The resident set is read less often than the clock (a read costs a system call). */
const RSS_CHECK_EVERY = 64 * CLOCK_CHECK_EVERY;
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
/** A level where one required op must come first (see `forcedOp`): it alone is tried. */
const FORCED_PHASE = 3;

function isInfoPhase(phase: number): boolean {
  return phase === ENABLING_PHASE || phase === INFO_PHASE;
}

/** The verdict on one partition; when not linearizable, the deepest point the search reached. */
/** How many partitions found not linearizable a check lists before it stops looking for more. */
export const MAX_COUNTEREXAMPLES = 100;

export type PartitionVerdict =
  | {
      readonly valid: true;
      readonly cacheEntries: number;
      /** With `keepOrder`: the linearization found (slots in order) and the state after it. */
      readonly order?: readonly number[];
      readonly stateAfter?: string;
    }
  | {
      readonly valid: 'unknown';
      readonly cacheEntries: number;
      /** What ended the search: its deadline, or its memory limit. */
      readonly limit: UnknownBecause;
    }
  | {
      readonly valid: false;
      readonly cacheEntries: number;
      /**
       * Whether the search cut a configuration that could have led past its deepest point (then
       * the prefix may be shorter than the longest one): only with `dead` pruning.
       */
      readonly cut?: boolean;
      /** Slots linearized, in order, at the deepest point. */
      readonly prefix: readonly number[];
      /** The slot whose return was reached with no way to linearize it. */
      readonly failing: number;
      readonly stateBefore: string;
    };

/**
 * How the search cuts configurations that leave dead a state some op still needs (see
 * StateSupply); the verdict is the same in each. `dead`: all of them, fastest. `shallower`: only
 * those that cannot lead past the deepest dead end found so far, so that the counterexample is
 * still the longest prefix that can be linearized at all, and the op that cannot follow it, as
 * with `off`.
 */
export type Pruning = 'dead' | 'shallower' | 'off';

/** Why a search gave no verdict. */
export type UnknownBecause = 'time' | 'memory';

export interface SearchOptions {
  /** When linearizable, return the order found. */
  readonly keepOrder?: boolean;
  /** Default `dead`. */
  readonly pruning?: Pruning;
  /** Default: none. */
  readonly memory?: MemoryLimits;
  /** The most distinct model states it may meet (default: the most a table holds, `MAX_STATES`). */
  readonly maxStates?: number;
}

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
 *
 * When the model says which single state an op needs (`Model.onlyStateFor`), a required op that
 * needs the current state and keeps it (a read of the current value) is placed at once, alone;
 * and configurations that leave dead a state an op still needs are cut (see `Pruning`).
 */
export function searchPartition<S, I, O>(
  partition: PartitionData<I, O>,
  model: Model<S, I, O>,
  deadlineMs: number,
  options: SearchOptions = {},
): PartitionVerdict {
  const memory = options.memory ?? NO_MEMORY_LIMIT;
  const cache = new MemoCache(memory.cacheBytes, memory.rssBytes);
  try {
    return search(partition, model, deadlineMs, cache, memory.rssBytes, options);
  } catch (error) {
    if (error instanceof MemoryLimitReached)
      return { valid: 'unknown', cacheEntries: cache.size, limit: 'memory' };
    throw error;
  } finally {
    cache.release();
  }
}

function search<S, I, O>(
  partition: PartitionData<I, O>,
  model: Model<S, I, O>,
  deadlineMs: number,
  cache: MemoCache,
  rssBytes: number,
  { keepOrder = false, pruning = 'dead', maxStates = MAX_STATES }: SearchOptions,
): PartitionVerdict {
  const n = partition.size;
  const status = partition.status;
  const inputs = partition.inputs;
  const outputs = partition.outputs;
  const invokePos = partition.invokePos;
  const completePos = partition.completePos;

  const [bit, kind, next, prev, groupOf, requiredBefore] = intArrays([n, n, 2 * n + 2, 2 * n + 2, n, n + 1]);
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
  const ids = new ValueIds();
  const groupById: number[] = [];
  let groups = 0;
  for (let slot = 0; slot < n; slot++) {
    if (kind[slot] !== OPTIONAL) continue;
    const id = ids.id(inputs[slot]);
    let group = id < 0 ? undefined : groupById[id];
    if (group === undefined) {
      group = groups++;
      if (id >= 0) groupById[id] = group;
    }
    groupOf[slot] = group;
  }
  const levels = required + infos;
  const [memberNext, memberPrev, stackSlot, stackStateId, stackPhase, best] = intArrays([
    n + groups,
    n + groups,
    levels,
    levels,
    levels,
    levels,
  ]);
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

  const states = new StateTable(model, maxStates);
  const supply = StateSupply.of(partition, model, states);
  const pruner = pruning === 'off' ? undefined : supply;
  const pruneAll = pruning === 'dead';
  /** Required ops invoked before each slot: a bound on how deep a dead configuration can lead. */
  for (let slot = 0; slot < n; slot++)
    requiredBefore[slot + 1] = requiredBefore[slot] + (kind[slot] === REQUIRED ? 1 : 0);
  const stackState: S[] = [];
  let depth = 0;
  let state = model.init();
  let stateId = states.id(state);
  let remaining = required;

  let bestDepth = 0;
  let bestScore = -1;
  let clean = 0;
  let failing = -1;
  let cut = false;
  let failingState = state;

  /** The first return in the list: info ops invoked before it are candidates. */
  let firstReturn = HEAD;
  const findFirstReturn = (): number => {
    let node = next[HEAD];
    while ((node & 1) === 1) node = next[node];
    return node;
  };

  /**
   * Whether the info op in `slot`, about to be linearized after a run of info ops, would leave the
   * same state if linearized before some of them (e.g. a write): that configuration has fewer info
   * ops and the same required ones, so it dominates this one, and the search tries it from there.
   */
  const reachableEarlierInRun = (slot: number, after: S): boolean => {
    for (let d = depth - 1; d >= 0 && isInfoPhase(stackPhase[d]); d--) {
      const direct = model.step(stackState[d], inputs[slot], outputs[slot]);
      if (direct !== undefined && model.equal(direct, after)) return true;
    }
    return false;
  };

  /**
   * The op to blame at a dead end: the blocking op, unless it could step but only by leaving dead
   * a state another op needs — then that op, which no order extending the prefix can place.
   */
  const cannotFollow = (blocking: number): number => {
    if (pruner === undefined || !pruneAll) return blocking;
    const after = model.step(state, inputs[blocking], outputs[blocking]);
    if (after === undefined) return blocking;
    if (pruner.take(blocking, stateId, states.id(after))) {
      pruner.restore(blocking);
      return blocking;
    }
    const doomed = pruner.firstNeeding(pruner.deadState, blocking);
    if (doomed < 0) return blocking;
    cut = true;
    return doomed;
  };

  /**
   * A candidate that can be put first in any completion, if one exists, so is tried alone: a
   * required op that needs the current state and keeps it (a read of the current value), moved
   * to the front, changes no state another op sees; an op that can take effect in any state (a
   * write), when no op left needs the current state nor the one it leaves, moved to the front,
   * is seen by no op before its old place — those take effect in any state, so they keep the state
   * or set one of their own — nor after it. -1 when there is none.
   */
  const forcedOp = (): number => {
    if (supply === undefined) return -1;
    const junk = supply.isJunk(stateId);
    for (let node = next[HEAD]; (node & 1) === 1; node = next[node]) {
      const slot = (node - 1) >>> 1;
      const free = junk && supply.isFree(slot);
      if (!free && supply.needOf(slot) !== stateId) continue;
      const after = model.step(state, inputs[slot], outputs[slot]);
      if (after === undefined) continue;
      if (free ? supply.isJunk(states.id(after)) : model.equal(after, state)) return slot;
    }
    return -1;
  };

  /** The best score any extension of a dead configuration can reach (see `score` below). */
  const deadEndBound = (slot: number, dead: number): number => {
    const doomed = pruner!.firstNeeding(dead, slot);
    const barrier = completePos[doomed];
    let lo = doomed;
    let hi = n;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (invokePos[mid] < barrier) lo = mid + 1;
      else hi = mid;
    }
    return requiredBefore[lo] * (infos + 1) + infos;
  };

  /**
   * Takes `slot` out of the supply as the state becomes `afterId`; false when the configuration
   * is dead and pruned.
   */
  const takeLive = (slot: number, afterId: number): boolean => {
    const supply = pruner!;
    if (supply.take(slot, stateId, afterId)) return true;
    if (pruneAll) {
      cut = true;
      return false;
    }
    if (deadEndBound(slot, supply.deadState) <= bestScore) return false;
    supply.force(slot);
    return true;
  };

  let phase = REQUIRED_PHASE;
  let levelStart = true;
  let entry = next[HEAD];
  let iterations = 0;
  while (remaining > 0) {
    if (++iterations % CLOCK_CHECK_EVERY === 0) {
      if (performance.now() > deadlineMs)
        return { valid: 'unknown', cacheEntries: cache.size, limit: 'time' };
      if (iterations % RSS_CHECK_EVERY === 0 && process.memoryUsage.rss() > rssBytes)
        return { valid: 'unknown', cacheEntries: cache.size, limit: 'memory' };
    }
    let slot = -1;
    if (levelStart) {
      levelStart = false;
      const forced = forcedOp();
      if (forced >= 0) {
        phase = FORCED_PHASE;
        slot = forced;
        entry = 2 * forced + 1;
      }
    }
    if (phase === FORCED_PHASE) {
      // The forced op is tried once: if it fails, so does the level.
      firstReturn = findFirstReturn();
    } else if (phase === REQUIRED_PHASE) {
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
      const isRequired = phase === REQUIRED_PHASE || phase === FORCED_PHASE;
      if (after !== undefined && (isRequired || !reachableEarlierInRun(slot, after))) {
        const afterId = states.id(after);
        if (isRequired) set.add(bit[slot]);
        else set.addInfo(groupOf[slot]);
        if (cache.add(set, afterId) && (pruner === undefined || takeLive(slot, afterId))) {
          stackSlot[depth] = slot;
          stackState[depth] = state;
          stackStateId[depth] = stateId;
          stackPhase[depth] = phase;
          depth++;
          state = after;
          stateId = afterId;
          if (isRequired) {
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
          levelStart = true;
          entry = next[HEAD];
          continue;
        }
        if (isRequired) set.remove(bit[slot]);
        else set.removeInfo(groupOf[slot]);
      }
      if (phase !== FORCED_PHASE) entry = phase === REQUIRED_PHASE ? next[entry] : entry + 1;
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
      failing = cannotFollow((firstReturn - 2) >>> 1);
      failingState = state;
    }
    if (depth === 0) break;
    depth--;
    if (depth < clean) clean = depth;
    const popped = stackSlot[depth];
    state = stackState[depth];
    stateId = stackStateId[depth];
    phase = stackPhase[depth];
    pruner?.restore(popped);
    if (phase === REQUIRED_PHASE || phase === FORCED_PHASE) {
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
    ...(cut ? { cut } : {}),
    prefix: Array.from(best.subarray(0, bestDepth)),
    failing,
    stateBefore: model.describe(failingState),
  };
}
