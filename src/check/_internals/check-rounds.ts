import type { Model } from '../model.js';
import { checkPartition } from './check-partition.js';
import { type MemoryLimits, NO_MEMORY_LIMIT } from '../../core/memory-limit.js';
import type { PartitionData } from './partition.js';
import { MAX_COUNTEREXAMPLES, type PartitionVerdict } from './search.js';

/**
 * The first round's time per partition; each later round gives the partitions left 4 times more.
 * Short: most keys of a key-value history are decided in a few ms, and a round with long budgets
 * let the keys whose searches are long hold back the one that fails at once (Porcupine's `c50-bad`
 * took 270 ms with 50 ms). A partition left alone in its round runs to the deadline: nothing waits
 * on it, so a restart would be lost work.
 */
const FIRST_ROUND_MS = 5;
const ROUND_GROWTH = 4;

/**
 * The verdict of each partition, by index; undefined for one left undecided. Partitions are
 * checked in rounds, in history order within a round: each partition still open gets a time
 * budget that grows from round to round, so that one partition whose search is long cannot hold
 * back a verdict another settles at once. Once a round has found a partition not linearizable,
 * the history's verdict is settled and the partitions still open stay undecided (as do all after
 * `MAX_COUNTEREXAMPLES` counterexamples); while none has, every partition is searched to the end
 * or the deadline (or its memory limit). A partition searched again with a larger budget costs at most a third more
 * than its last search.
 */
export function checkInRounds(
  count: number,
  dataOf: (index: number) => PartitionData,
  model: Model,
  deadlineMs: number,
  memory: MemoryLimits = NO_MEMORY_LIMIT,
): (PartitionVerdict | undefined)[] {
  const verdicts = new Array<PartitionVerdict | undefined>(count);
  let open = Array.from({ length: count }, (_, i) => i);
  let failed = 0;
  for (let budgetMs = FIRST_ROUND_MS; open.length > 0; budgetMs *= ROUND_GROWTH) {
    const stillOpen: number[] = [];
    for (const index of open) {
      if (failed >= MAX_COUNTEREXAMPLES) break;
      const untilMs = open.length === 1 ? deadlineMs : Math.min(deadlineMs, performance.now() + budgetMs);
      const verdict = checkPartition(dataOf(index), model, untilMs, memory);
      // A search out of memory is not tried again: a longer one would need more.
      if (verdict.valid === 'unknown' && verdict.limit === 'time' && untilMs < deadlineMs) {
        stillOpen.push(index);
        continue;
      }
      verdicts[index] = verdict;
      if (verdict.valid === false) failed++;
    }
    if (failed > 0) break;
    open = stillOpen;
  }
  return verdicts;
}
