import type { Op } from '../core/op.js';
import type { Counterexample } from './counterexample.js';
import { HistoryBuilder } from './_internals/history-builder.js';
import type { Partition } from './_internals/partition.js';
import { defaultMemoryLimitBytes } from '../core/memory-limit.js';
import { runPartitions } from './_internals/run-partitions.js';
import { MAX_COUNTEREXAMPLES, type UnknownBecause } from './_internals/search.js';
import { MODEL_NAMES, type Model, type ModelName, isModelName } from './model.js';
import { REGISTER_MODEL_NAMES, isRegisterModelName, modelByName } from './models/by-name.js';
import { findNonMonotonicReads } from './monotonic-reads.js';
import { READ_CONSISTENCIES, type ReadConsistency, relaxReads } from './sequential-reads.js';

export type { Counterexample } from './counterexample.js';
export { HistoryError } from './history/history-error.js';
export { MAX_COUNTEREXAMPLES, type UnknownBecause } from './_internals/search.js';
export { defaultMemoryLimitBytes } from '../core/memory-limit.js';
export { MODEL_NAMES, isModelName, type Model, type ModelName } from './model.js';

export interface CheckOptions {
  /** A built-in model by name, or a system adapter's own. */
  readonly model: ModelName | Model;
  /** Give up after this long and answer `'unknown'`. Default: no limit. */
  readonly timeLimitMs?: number;
  /**
   * Give up, and answer `'unknown'`, before the process's memory passes this many bytes (the
   * search's memo tables are bounded to what is left, and the resident set is watched). Default
   * `defaultMemoryLimitBytes()`: half the machine's memory (or its cgroup's). `Infinity`: no bound.
   */
  readonly memoryLimitBytes?: number;
  /**
   * The value registers hold before any write (`register`, `cas-register`, and every key of
   * `kv`): Knossos's registers start at 0. Default: nil (null).
   */
  readonly initial?: unknown;
  /**
   * Threads to check partitions on, this one included. Default: worker threads (as many as cores)
   * only for built-in models and long histories of long partitions, where they pay off (see
   * WORKER_MIN_OPS). Worker threads need the compiled code (dist/); from source, one thread.
   */
  readonly threads?: number;
  /**
   * What reads promise (register models): `sequential` lets a read return an earlier state of its
   * key, never older than its process's own last update of that key (see `relaxReads`). Default
   * `linearizable`.
   */
  readonly reads?: ReadConsistency;
}

export interface LinearizabilityResult<T = Op> {
  readonly valid: true | false | 'unknown';
  /** When unknown: the limit that ended a search (`memory` when any search ran out of memory). */
  readonly unknownBecause?: UnknownBecause;
  /** The memory bound the check ran under, in bytes. */
  readonly memoryLimitBytes?: number;
  readonly model: string;
  /** Independent sub-histories checked (one per key for `kv`). */
  readonly partitions: number;
  /** Client ops that count (ok and info; fail ops did not happen). */
  readonly ops: number;
  readonly elapsedMs: number;
  /** Configurations the search memoized, summed over partitions: a measure of the work done. */
  readonly cacheEntries: number;
  readonly counterexample?: Counterexample<T>;
  /** Every partition (key) found not linearizable, `counterexample` first; at most `MAX_COUNTEREXAMPLES`. */
  readonly counterexamples?: readonly Counterexample<T>[];
  /**
   * Partitions left undecided once others were found not linearizable (which settles the
   * verdict): their searches were long. Absent when every partition was decided.
   */
  readonly undecidedPartitions?: number;
}

/** Checks the options a caller gave; throws with a message saying what to pass instead. */
function resolveOptions(options: CheckOptions): Model {
  const { model, timeLimitMs, threads, initial } = options;
  if (typeof model === 'string' && !isModelName(model)) {
    throw new TypeError(
      `checkOps: unknown model "${String(model)}": use one of ${MODEL_NAMES.join(', ')}, or pass a Model`,
    );
  }
  if (timeLimitMs !== undefined && !(timeLimitMs >= 0)) {
    throw new RangeError(`checkOps: timeLimitMs must be a number of ms >= 0, got ${timeLimitMs}`);
  }
  const memory = options.memoryLimitBytes;
  if (memory !== undefined && !(memory > 0)) {
    throw new RangeError(`checkOps: memoryLimitBytes must be a number of bytes > 0, got ${memory}`);
  }
  if (threads !== undefined && !(Number.isInteger(threads) && threads >= 1)) {
    throw new RangeError(`checkOps: threads must be an integer >= 1, got ${threads}`);
  }
  if (options.reads !== undefined && !READ_CONSISTENCIES.includes(options.reads)) {
    throw new TypeError(
      `checkOps: reads must be one of ${READ_CONSISTENCIES.join(', ')}, got ${options.reads as string}`,
    );
  }
  if (options.reads === 'sequential' && (typeof model !== 'string' || !isRegisterModelName(model))) {
    throw new TypeError(
      `checkOps: sequential reads are for the register models (${REGISTER_MODEL_NAMES.join(', ')}), not ${typeof model === 'string' ? model : model.name}`,
    );
  }
  if (initial !== undefined && (typeof model !== 'string' || !isRegisterModelName(model))) {
    throw new TypeError(
      `checkOps: initial is for the register models (${REGISTER_MODEL_NAMES.join(', ')}), not ${typeof model === 'string' ? model : model.name}: a model of your own sets its state in init()`,
    );
  }
  return typeof model === 'string' ? modelByName(model, initial) : model;
}

async function checkPartitions(
  partitions: readonly Partition[],
  model: Model,
  options: CheckOptions,
  ops: number,
  startMs: number,
): Promise<LinearizabilityResult<number>> {
  const deadlineMs = options.timeLimitMs === undefined ? Infinity : startMs + options.timeLimitMs;
  const memoryLimitBytes = options.memoryLimitBytes ?? defaultMemoryLimitBytes();
  const verdicts = await runPartitions(partitions, model, {
    modelName: typeof options.model === 'string' ? options.model : undefined,
    ...(options.initial === undefined ? {} : { initial: options.initial }),
    threads: options.threads,
    deadlineMs,
    memoryLimitBytes,
  });
  let cacheEntries = 0;
  let valid: true | false | 'unknown' = true;
  let unknownBecause: UnknownBecause | undefined;
  const counterexamples: Counterexample<number>[] = [];
  verdicts.forEach((verdict, i) => {
    if (verdict === undefined) return;
    cacheEntries += verdict.cacheEntries;
    if (verdict.valid === 'unknown') {
      if (valid === true) valid = 'unknown';
      if (unknownBecause !== 'memory') unknownBecause = verdict.limit;
    }
    if (verdict.valid === false) {
      valid = false;
      if (counterexamples.length >= MAX_COUNTEREXAMPLES) return;
      const partition = partitions[i];
      counterexamples.push({
        ...(partition.key === undefined ? {} : { key: partition.key }),
        longestPrefix: verdict.prefix.map((slot) => partition.representativePos(slot)),
        failingOp: partition.representativePos(verdict.failing),
        stateBefore: verdict.stateBefore,
      });
    }
  });
  const counterexample = counterexamples.at(0);
  // Count by what was decided: an undecided partition may be a hole of the array, which filter skips.
  const undecided = partitions.length - verdicts.filter((verdict) => verdict !== undefined).length;
  return {
    valid,
    ...((valid as boolean | 'unknown') === 'unknown' && unknownBecause !== undefined
      ? { unknownBecause }
      : {}),
    ...(memoryLimitBytes === Infinity ? {} : { memoryLimitBytes }),
    ...(undecided > 0 ? { undecidedPartitions: undecided } : {}),
    model: model.name,
    partitions: partitions.length,
    ops,
    elapsedMs: performance.now() - startMs,
    cacheEntries,
    ...(counterexample === undefined ? {} : { counterexample, counterexamples }),
  };
}

/**
 * Checks a history (ops as in `history.jsonl`, in history order) for linearizability against a
 * model. Never throws because the history is not linearizable; throws `HistoryError` when ops do
 * not pair up or the model cannot read one.
 */
export async function checkOps(
  history: readonly Op[],
  options: CheckOptions,
): Promise<LinearizabilityResult> {
  const startMs = performance.now();
  const model = resolveOptions(options);
  // Under sequential reads the search sees each read moved back; what it reports is the op as given.
  const { ops, origin } =
    options.reads === 'sequential' ? relaxReads(history) : { ops: history, origin: history };
  const builder = new HistoryBuilder(model, ops.length);
  for (const op of ops) builder.add(op);
  const result = await checkPartitions(builder.finish(), model, options, builder.ops, startMs);
  if (options.reads === 'sequential' && result.valid === true) {
    // Sequential reads may be stale, but a process's reads of a key never go back.
    const single = options.model === 'register' || options.model === 'cas-register';
    const backwards = findNonMonotonicReads(history, single, options.initial ?? null);
    if (backwards.length > 0)
      return { ...result, valid: false, counterexample: backwards[0], counterexamples: backwards };
  }
  const { counterexample, counterexamples, ...rest } = result;
  if (counterexample === undefined) return rest;
  const toOps = (ce: Counterexample<number>): Counterexample => ({
    ...ce,
    longestPrefix: ce.longestPrefix.map((position) => origin[position]),
    failingOp: origin[ce.failingOp],
  });
  return {
    ...rest,
    counterexample: toOps(counterexample),
    counterexamples: (counterexamples ?? []).map(toOps),
  };
}

/**
 * Like `checkOps` for a history too large to hold as objects: ops are consumed one at a time and
 * kept compactly. The counterexample names ops by their position in the stream (0-based).
 */
export async function checkOpStream(
  ops: Iterable<Op> | AsyncIterable<Op>,
  options: CheckOptions,
): Promise<LinearizabilityResult<number>> {
  const startMs = performance.now();
  const model = resolveOptions(options);
  const builder = new HistoryBuilder(model);
  if (Symbol.iterator in ops) {
    for (const op of ops) builder.add(op);
  } else {
    for await (const op of ops) builder.add(op);
  }
  return checkPartitions(builder.finish(), model, options, builder.ops, startMs);
}
