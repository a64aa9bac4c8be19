import type { Model } from '../model.js';
import { findImpossibleOp, historyBefore } from './impossible-op.js';
import { type MemoryLimits, NO_MEMORY_LIMIT } from '../../core/memory-limit.js';
import type { PartitionData } from './partition.js';
import { type PartitionVerdict, searchPartition } from './search.js';

/**
 * The verdict on one partition. An op that no reachable state allows settles it at once; the
 * history before that op is then searched only for the prefix to show. A history found not
 * linearizable by a search that cut configurations is searched again with less pruning, for the
 * counterexample: the longest prefix that can be linearized at all, and the op that cannot follow
 * it.
 */
export function checkPartition<S, I, O>(
  partition: PartitionData<I, O>,
  model: Model<S, I, O>,
  deadlineMs: number,
  memory: MemoryLimits = NO_MEMORY_LIMIT,
): PartitionVerdict {
  const impossible = findImpossibleOp(partition, model);
  if (impossible < 0) {
    const verdict = searchPartition(partition, model, deadlineMs, { memory });
    if (verdict.valid !== false || verdict.cut !== true) return verdict;
    const clearer = searchPartition(partition, model, deadlineMs, { pruning: 'shallower', memory });
    return clearer.valid === false ? clearer : verdict;
  }
  const before = searchPartition(historyBefore(partition, impossible), model, deadlineMs, {
    keepOrder: true,
    memory,
  });
  if (before.valid === false) return before;
  return {
    valid: false,
    cacheEntries: before.cacheEntries,
    prefix: before.valid === true ? (before.order ?? []) : [],
    failing: impossible,
    stateBefore:
      before.valid === true
        ? (before.stateAfter ?? '')
        : `not known (the search for an order of the ops before it was cut short by its ${before.limit === 'memory' ? 'memory limit' : 'time budget'}; no state the model can reach allows this op)`,
  };
}
