import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';

import type { Model, ModelName } from '../model.js';
import { canonical } from '../models/value.js';
import type { Partition, PartitionData } from './partition.js';
import type { WorkerInput } from './partition-worker.js';
import { checkInRounds } from './check-rounds.js';
import { memoryLimitsFor, type MemoryLimits } from '../../core/memory-limit.js';
import type { PartitionVerdict } from './search.js';

/**
 * Worker threads pay off only for long histories of long partitions: copying a partition to a
 * worker costs about as much as checking it when its search is easy. Measured on 2 cores with
 * 1M-op kv histories, 50 clients: 10 keys 2.9 s → 2.3 s with 2 threads; 1000 keys 0.9 s → 1.2 s.
 */
export const WORKER_MIN_OPS = 200_000;
export const WORKER_MIN_MEAN_PARTITION_OPS = 20_000;

const WORKER_URL = new URL('./partition-worker.js', import.meta.url);

export interface RunOptions {
  /** The built-in model's name: only those can be rebuilt in a worker. */
  readonly modelName: ModelName | undefined;
  /** The registers' value before any write, for a worker to rebuild the model with. */
  readonly initial?: unknown;
  /** Threads to use, the calling one included; undefined: decide by size. */
  readonly threads: number | undefined;
  readonly deadlineMs: number;
  /** Bytes the whole process may hold while it checks (Infinity: no bound). */
  readonly memoryLimitBytes: number;
}

/** How many threads to check on: workers only for large histories of many partitions. */
function threadCount(partitions: readonly Partition[], options: RunOptions): number {
  if (options.modelName === undefined || partitions.length < 2) return 1;
  // From source (tsx, vitest) there is no compiled worker to start.
  if (!existsSync(fileURLToPath(WORKER_URL))) return 1;
  if (options.threads !== undefined) return Math.max(1, Math.min(options.threads, partitions.length));
  const ops = partitions.reduce((sum, p) => sum + p.size, 0);
  if (ops < WORKER_MIN_OPS || ops / partitions.length < WORKER_MIN_MEAN_PARTITION_OPS) return 1;
  return Math.min(availableParallelism(), partitions.length);
}

/** Checks partitions on this thread (see `checkInRounds`). */
function runHere(
  partitions: readonly Partition[],
  model: Model,
  deadlineMs: number,
  memory: MemoryLimits,
): (PartitionVerdict | undefined)[] {
  const dataOf = (i: number): PartitionData => partitions[i].data(false);
  return checkInRounds(partitions.length, dataOf, model, deadlineMs, memory);
}

function runInWorker(input: WorkerInput): Promise<(PartitionVerdict | undefined)[]> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(WORKER_URL, { workerData: input, execArgv: [] });
    worker.once('message', (verdicts: (PartitionVerdict | undefined)[]) => {
      resolve(verdicts);
    });
    worker.once('error', reject);
    worker.once('exit', (code) => {
      if (code !== 0) reject(new Error(`linearizability worker exited with code ${code}`));
    });
  });
}

/**
 * The verdict of each partition, by index; undefined for partitions left undecided once a thread
 * had found one not linearizable (see `checkInRounds`). Partitions are spread over threads by
 * size; each thread checks its share in rounds.
 */
export async function runPartitions(
  partitions: readonly Partition[],
  model: Model,
  options: RunOptions,
): Promise<(PartitionVerdict | undefined)[]> {
  const threads = threadCount(partitions, options);
  // Each thread's memo tables get an equal share of what the bound leaves.
  const memory = memoryLimitsFor(options.memoryLimitBytes, threads);
  if (threads === 1 || options.modelName === undefined) {
    return runHere(partitions, model, options.deadlineMs, memory);
  }
  const buckets: number[][] = Array.from({ length: threads }, () => []);
  const load = new Array<number>(threads).fill(0);
  const bySize = partitions.map((_, i) => i).sort((a, b) => partitions[b].size - partitions[a].size);
  for (const index of bySize) {
    const lightest = load.indexOf(Math.min(...load));
    buckets[lightest].push(index);
    load[lightest] += partitions[index].size;
  }
  for (const bucket of buckets) bucket.sort((a, b) => a - b);
  const remainingMs = options.deadlineMs - performance.now();
  const modelName = options.modelName;
  const pending = buckets.slice(1).map((bucket) =>
    runInWorker({
      model: modelName,
      // Its canonical form: a worker gets a structured clone, which loses an EDN value's class.
      ...(options.initial === undefined ? {} : { initial: canonical(options.initial) }),
      remainingMs,
      memory,
      partitions: bucket.map((i) => partitions[i].data(true)),
    }),
  );
  const mine = runHere(
    buckets[0].map((i) => partitions[i]),
    model,
    options.deadlineMs,
    memory,
  );
  const results = [mine, ...(await Promise.all(pending))];
  const verdicts = new Array<PartitionVerdict | undefined>(partitions.length);
  buckets.forEach((bucket, b) => {
    results[b].forEach((verdict, j) => {
      verdicts[bucket[j]] = verdict;
    });
  });
  return verdicts;
}
