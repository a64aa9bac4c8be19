import type { Link } from '../../cluster/net/backend.js';
import {
  FAMILY_KINDS,
  type Fault,
  type FaultValue,
  type PartitionShape,
  PARTITION_SHAPES,
} from '../../core/fault.js';
import { partitionLinks, shapesFor } from '../partition.js';
import {
  acted,
  type FamilyContext,
  type FaultFamilyPackage,
  type HealOp,
  linkNodes,
  type Recorded,
  type SpaceContext,
} from './family.js';

/** `start-partition` (a shape, or `leader`: isolate it) / `stop-partition`: links cut both ways. */
export class PartitionFamily implements FaultFamilyPackage {
  readonly family = 'partition';
  readonly kinds = FAMILY_KINDS.partition;
  private partitioned: readonly Link[] = [];

  values({ ctx }: SpaceContext): { 'start-partition': FaultValue[]; 'stop-partition': FaultValue[] } {
    const shapes: FaultValue[] = shapesFor(ctx.cluster.nodes.length);
    if (ctx.system.leadership) shapes.push('leader');
    return { 'start-partition': shapes, 'stop-partition': [null] };
  }

  async enact(fault: Fault, ctx: FamilyContext, recorded?: Recorded): Promise<ReturnType<typeof acted>> {
    if (fault.f === 'stop-partition') {
      const had = this.partitioned;
      this.partitioned = [];
      await ctx.network.cut([]);
      return acted(fault, [...new Set(had.flat())]);
    }
    const members = ctx.cluster.members;
    let links: readonly Link[];
    if (recorded?.links) links = recorded.links;
    else if (fault.value === 'leader') {
      const leader = await ctx.leader();
      if (leader === undefined) return acted(fault, []);
      links = partitionLinks('isolate', members, ctx.rng, leader);
    } else {
      const shape = PARTITION_SHAPES.includes(fault.value as PartitionShape)
        ? (fault.value as PartitionShape)
        : 'halves';
      links = partitionLinks(shape, members, ctx.rng);
    }
    this.partitioned = links;
    await ctx.network.cut(links);
    return acted(fault, [...new Set(links.flat())], links);
  }

  undoing(): HealOp | undefined {
    return this.partitioned.length > 0
      ? { f: 'stop-partition', value: linkNodes(this.partitioned) }
      : undefined;
  }

  /** The network is healed as one: this also ends the packet family's faults (one rule change). */
  async heal(ctx: FamilyContext): Promise<undefined> {
    this.partitioned = [];
    await ctx.network.heal();
    return undefined;
  }
}
