import { type FaultFamily, type FaultValue, PARTITION_SHAPES, TARGETS } from './fault.js';

/**
 * What a packet fault does to the packets of its links: `packet:loss` keeps the packet family to
 * loss (as `packet:one` keeps it to one target), e.g. on hosts whose kernel has no netem to delay.
 */
export const PACKET_EFFECTS = ['delay', 'loss', 'dup'] as const;
export type PacketEffect = (typeof PACKET_EFFECTS)[number];

/** The effects of a packet fault's value (`{delayMs: 200}` → delay); none for other values. */
export function packetEffects(value: FaultValue): PacketEffect[] {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return [];
  const v = value as { delayMs?: unknown; lossPct?: unknown; dupPct?: unknown };
  const on = (x: unknown): boolean => typeof x === 'number' && x > 0;
  return [
    ...(on(v.delayMs) ? (['delay'] as const) : []),
    ...(on(v.lossPct) ? (['loss'] as const) : []),
    ...(on(v.dupPct) ? (['dup'] as const) : []),
  ];
}

/**
 * What `--faults FAMILY:TARGET` may name per family: the targets (and, for partitions, the shapes;
 * for packets, the effects) its faults are offered with. A family given plainly takes them all.
 */
export const FAMILY_TARGETS: Readonly<Record<FaultFamily, readonly string[]>> = {
  partition: [...PARTITION_SHAPES, 'leader'],
  kill: TARGETS,
  pause: TARGETS,
  packet: [...TARGETS, ...PACKET_EFFECTS],
  member: ['one', 'leader'],
  clock: TARGETS,
  disk: TARGETS,
};

/** The targets a run restricts some of its families to (`--faults kill:one`); a family absent takes all. */
export type FaultTargets = Readonly<Partial<Record<FaultFamily, readonly string[]>>>;

/**
 * Why `targets` cannot restrict `family`, in one line that lists what it takes; undefined when
 * every one is valid.
 */
export function badFaultTarget(family: FaultFamily, targets: readonly string[]): string | undefined {
  const valid = FAMILY_TARGETS[family];
  const bad = targets.find((t) => !valid.includes(t));
  if (bad === undefined) return undefined;
  return `unknown target "${family}:${bad}": ${family} takes ${valid.map((t) => `${family}:${t}`).join(', ')}`;
}
