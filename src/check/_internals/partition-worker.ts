import { parentPort, workerData } from 'node:worker_threads';

import type { ModelName } from '../model.js';
import { modelByName } from '../models/by-name.js';
import type { MemoryLimits } from '../../core/memory-limit.js';
import type { PartitionData } from './partition.js';
import { checkInRounds } from './check-rounds.js';
import type { PartitionVerdict } from './search.js';

/** What a worker thread is given: partitions of one bucket, in history order. */
export interface WorkerInput {
  readonly model: ModelName;
  /** The registers' value before any write, when not nil. */
  readonly initial?: unknown;
  readonly remainingMs: number;
  readonly memory: MemoryLimits;
  readonly partitions: readonly PartitionData[];
}

/** Checks its partitions (see `checkInRounds`). */
function run(input: WorkerInput): (PartitionVerdict | undefined)[] {
  const deadlineMs = performance.now() + input.remainingMs;
  const model = modelByName(input.model, input.initial);
  const dataOf = (i: number): PartitionData => input.partitions[i];
  return checkInRounds(input.partitions.length, dataOf, model, deadlineMs, input.memory);
}

parentPort?.postMessage(run(workerData as WorkerInput));
