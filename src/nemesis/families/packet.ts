import type { Link } from '../../cluster/net/backend.js';
import { FAMILY_KINDS, type Fault, type PacketParams } from '../../core/fault.js';
import {
  acted,
  type FamilyContext,
  type FaultFamilyPackage,
  type FaultOutcome,
  type HealOp,
  linkNodes,
  type Recorded,
} from './family.js';

const PACKET_CHOICES: readonly PacketParams[] = [
  { target: 'one', delayMs: 200 },
  { target: 'all', delayMs: 50 },
  { target: 'minority', delayMs: 500 },
  { target: 'one', lossPct: 20 },
  { target: 'minority', lossPct: 5 },
];

/** `start-packet` (delay or loss on every link of the targets) / `stop-packet`. */
export class PacketFamily implements FaultFamilyPackage {
  readonly family = 'packet';
  readonly kinds = FAMILY_KINDS.packet;
  private packetLinks: readonly Link[] = [];

  values(): { 'start-packet': readonly PacketParams[]; 'stop-packet': null[] } {
    return { 'start-packet': PACKET_CHOICES, 'stop-packet': [null] };
  }

  async enact(fault: Fault, ctx: FamilyContext, recorded?: Recorded): Promise<FaultOutcome> {
    if (fault.f === 'stop-packet') {
      const had = this.packetLinks;
      this.packetLinks = [];
      await ctx.network.degrade([], { target: 'all' });
      return acted(fault, [...new Set(had.flat())]);
    }
    const params = (
      typeof fault.value === 'object' && fault.value !== null && !Array.isArray(fault.value)
        ? fault.value
        : { target: 'one', delayMs: 100 }
    ) as PacketParams;
    const members = ctx.cluster.members;
    let links: readonly Link[];
    if (recorded?.links) links = recorded.links;
    else {
      const nodes = await ctx.targetNodes(params.target, members);
      links = members.flatMap((a) =>
        members.filter((b) => a !== b && (nodes.includes(a) || nodes.includes(b))).map((b): Link => [a, b]),
      );
    }
    this.packetLinks = links;
    await ctx.network.degrade(links, params);
    return acted(fault, [...new Set(links.flat())], links);
  }

  undoing(): HealOp | undefined {
    return this.packetLinks.length > 0 ? { f: 'stop-packet', value: linkNodes(this.packetLinks) } : undefined;
  }

  /** The partition family heals the whole network (one rule change); only forget the links here. */
  heal(): Promise<undefined> {
    this.packetLinks = [];
    return Promise.resolve(undefined);
  }
}
