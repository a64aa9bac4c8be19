import type { Op } from '../../core/op.js';
import { describeLinks, linkFaultOf } from '../../nemesis/grudge.js';
import type { ScheduleEntry } from '../../nemesis/nemesis.js';

/**
 * The grudge of each nemesis op of a schedule that enacted a fault on links, by op index: the
 * history writes a fault's completion with the nodes it acted on as its value, and the schedule's
 * entries keep the links; each entry with links is matched, in order, to the first completion of
 * the same fault on the same nodes not matched yet.
 */
export function nemesisGrudges(ops: readonly Op[], faults: readonly ScheduleEntry[]): Map<number, string> {
  const grudges = new Map<number, string>();
  const nemesis = ops.filter((op) => op.process === 'nemesis' && op.error === undefined);
  let from = 0;
  for (const entry of faults) {
    const nodes = entry.nodes ?? [];
    const grudge = describeLinks(nodes, entry.links, [], linkFaultOf(entry.f));
    if (grudge === undefined) continue;
    const wanted = JSON.stringify(nodes);
    const at = nemesis.findIndex(
      (op, i) => i >= from && op.f === entry.f && JSON.stringify(op.value) === wanted,
    );
    if (at < 0) continue;
    grudges.set(nemesis[at].index, grudge);
    from = at + 1;
  }
  return grudges;
}
