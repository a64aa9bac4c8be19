import { type FaultFamily, PARTITION_SHAPES, TARGETS } from './fault.js';

/**
 * What `--faults FAMILY:TARGET` may name per family: the targets (and, for partitions, the shapes)
 * its faults are offered with. A family given plainly takes them all.
 */
export const FAMILY_TARGETS: Readonly<Record<FaultFamily, readonly string[]>> = {
  partition: [...PARTITION_SHAPES, 'leader'],
  kill: TARGETS,
  pause: TARGETS,
  packet: TARGETS,
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
