import { parentPort, workerData } from 'node:worker_threads';

import type { ModelName } from '../model.js';
import { modelByName } from '../models/by-name.js';
import type { PartitionData } from './partition.js';
import { checkPartition } from './check-partition.js';
import { MAX_COUNTEREXAMPLES, type PartitionVerdict } from './search.js';

/** What a worker thread is given: partitions of one bucket, in history order. */
export interface WorkerInput {
  readonly model: ModelName;
  /** The registers' value before any write, when not nil. */
  readonly initial?: unknown;
  readonly remainingMs: number;
  readonly partitions: readonly PartitionData[];
}

/** Checks its partitions in order, stopping after `MAX_COUNTEREXAMPLES` that are not linearizable. */
function run(input: WorkerInput): PartitionVerdict[] {
  const deadlineMs = performance.now() + input.remainingMs;
  const model = modelByName(input.model, input.initial);
  const verdicts: PartitionVerdict[] = [];
  let failed = 0;
  for (const partition of input.partitions) {
    const verdict = checkPartition(partition, model, deadlineMs);
    verdicts.push(verdict);
    if (verdict.valid === false && ++failed >= MAX_COUNTEREXAMPLES) break;
  }
  return verdicts;
}

parentPort?.postMessage(run(workerData as WorkerInput));
