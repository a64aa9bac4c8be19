import { packetEffects } from '../../core/fault-targets.js';
import { PacketFamily } from '../../nemesis/families/packet.js';
import { keepTargets } from '../../nemesis/target-limits.js';
import type { RunConfig } from '../config.js';
import { isLet, readSchedule } from '../schedule-file.js';

/**
 * The packet effects (delay, loss, dup) the run's packet faults may use: the packet family's
 * values kept as `--faults packet:…` keeps them (the one list a local run draws from too), and
 * those of its schedule files' `start-packet` lines.
 */
export function packetEffectsOf(config: RunConfig, nodes: readonly string[]): Set<string> {
  const values = config.faults.includes('packet')
    ? (keepTargets('packet', new PacketFamily().values(), config.faultTargets)['start-packet'] ?? [])
    : [];
  const lines = (config.schedule ?? [])
    .flatMap((file) => readSchedule(file, nodes))
    .flatMap((item) => (!isLet(item) && item.f === 'start-packet' ? [item.value] : []));
  return new Set([...values, ...lines].flatMap((v) => packetEffects(v)));
}
