import { capabilitiesOf, type Placement } from '../../cluster/placement.js';
import type { RuntimeCapabilities } from '../../cluster/runtime/runtime.js';
import { UsageError } from '../../core/errors.js';
import { FAULT_FAMILIES, type FaultFamily } from '../../core/fault.js';
import type { RunConfig } from '../config.js';
import { packetEffectsOf } from './packet-effects.js';

/** Where the flags put the nodes: on SSH hosts (`--hosts`), in containers (`--hosts docker:IMAGE`), else here. */
export function placementKind(config: RunConfig): Placement['kind'] {
  return config.hosts !== undefined ? 'ssh' : config.containers !== undefined ? 'docker' : 'local';
}

/** How a refusal names the place, and the nodes' own places in it. */
const WHERE: Readonly<Record<Placement['kind'], { readonly place: string; readonly nodes: string }>> = {
  local: { place: 'here', nodes: 'on this machine' },
  ssh: { place: 'on SSH hosts', nodes: 'on the hosts' },
  docker: { place: 'in containers', nodes: 'in the containers' },
  sim: { place: 'in the simulator', nodes: 'in the simulated world' },
};

/** The fault families that need something of the place, and why. */
const FAMILY_NEEDS: Partial<
  Record<FaultFamily, { readonly capability: keyof RuntimeCapabilities; readonly why: string }>
> = {
  member: { capability: 'membership', why: 'membership changes wipe data dirs' },
  clock: { capability: 'libfaketime', why: 'clock faults need libfaketime preloaded' },
  disk: { capability: 'fuse', why: 'disk faults need the FUSE disk layer' },
};

/**
 * Refuses, in one line and before anything is made or probed, what the run asks of the place its
 * nodes run in and the place's runtime does not declare it can do (`RuntimeCapabilities`): a fault
 * family, packet delay or duplication (netem), checkpoints. `wants` says whether the run enables a
 * family or its schedule has a line of it.
 */
export function refuseWhatThePlaceLacks(
  config: RunConfig,
  nodes: readonly string[],
  wants: (family: FaultFamily) => boolean,
): void {
  const kind = placementKind(config);
  const can = capabilitiesOf(kind);
  const where = WHERE[kind];
  const done = FAULT_FAMILIES.filter((f) => {
    const need = FAMILY_NEEDS[f];
    return need === undefined || can[need.capability];
  });
  for (const family of FAULT_FAMILIES) {
    const need = FAMILY_NEEDS[family];
    if (need === undefined || can[need.capability] || !wants(family)) continue;
    throw new UsageError(
      'unsupported-fault',
      `--faults ${family}: not ${where.place} (${need.why} ${where.nodes}, not done yet): choose from ${done.join(',')}`,
    );
  }
  if (!can.netem) {
    const delayOrDup = [...packetEffectsOf(config, nodes)].filter((e) => e !== 'loss');
    if (delayOrDup.length > 0) {
      throw new UsageError(
        'unsupported-fault',
        `--faults packet: ${where.place} packet faults are loss only (iptables statistic rules), not ${delayOrDup.map((e) => (e === 'dup' ? 'duplication' : e)).join(' or ')}: give --faults …,packet:loss`,
      );
    }
  }
  if (!can.checkpoints && (config.checkpoints > 0 || config.checkpoint !== undefined)) {
    throw new UsageError(
      'bad-flag',
      `--checkpoints/--from-checkpoint: checkpoints of nodes ${where.place} are not taken yet: give --checkpoints 0`,
    );
  }
}
