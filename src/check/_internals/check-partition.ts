import type { Model } from '../model.js';
import { findImpossibleOp, historyBefore } from './impossible-op.js';
import type { PartitionData } from './partition.js';
import { type PartitionVerdict, searchPartition } from './search.js';

/**
 * The verdict on one partition. An op that no reachable state allows settles it at once; the
 * history before that op is then searched only for the prefix to show.
 */
export function checkPartition<S, I, O>(
  partition: PartitionData<I, O>,
  model: Model<S, I, O>,
  deadlineMs: number,
): PartitionVerdict {
  const impossible = findImpossibleOp(partition, model);
  if (impossible < 0) return searchPartition(partition, model, deadlineMs);
  const before = searchPartition(historyBefore(partition, impossible), model, deadlineMs, true);
  if (before.valid === false) return before;
  return {
    valid: false,
    cacheEntries: before.cacheEntries,
    prefix: before.valid === true ? (before.order ?? []) : [],
    failing: impossible,
    stateBefore:
      before.valid === true
        ? (before.stateAfter ?? '')
        : 'not known (time limit): no reachable state allows this op',
  };
}
