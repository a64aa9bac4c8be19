import {
  FAMILY_KINDS,
  type FaultFamily,
  type FaultKind,
  type FaultValue,
  type Target,
} from '../core/fault.js';
import { type FaultTargets, PACKET_EFFECTS, packetEffects } from '../core/fault-targets.js';
import { majoritySize } from './targets.js';

/** What a fault value aims at: its target or shape (`'one'`, `'halves'`), or undefined (null, nodes). */
function aimOf(value: FaultValue): string | undefined {
  if (typeof value === 'string') return value;
  if (value !== null && !Array.isArray(value) && 'target' in value && typeof value.target === 'string') {
    return value.target;
  }
  return undefined;
}

/**
 * The values a family offers, kept to the targets the run chose for it: the faults that inject
 * keep only values aimed at one of them; the family's undoing kind (its last) keeps all. Packet
 * effects (`packet:loss`) keep the values whose every effect is chosen, and keep every target
 * unless targets are chosen too.
 */
export function keepTargets(
  family: FaultFamily,
  values: Partial<Record<FaultKind, readonly FaultValue[]>>,
  targets: FaultTargets,
): Partial<Record<FaultKind, readonly FaultValue[]>> {
  const kept = targets[family];
  if (kept === undefined) return values;
  const kinds = FAMILY_KINDS[family];
  const undo = kinds[kinds.length - 1];
  const effects = kept.filter((t) => (PACKET_EFFECTS as readonly string[]).includes(t));
  const aims = kept.filter((t) => !effects.includes(t));
  const keeps = (v: FaultValue): boolean =>
    (aims.length === 0 || aims.includes(aimOf(v) ?? '')) &&
    packetEffects(v).every((e) => effects.length === 0 || effects.includes(e));
  const out: Partial<Record<FaultKind, readonly FaultValue[]>> = {};
  for (const kind of kinds) {
    const offered = values[kind] ?? [null];
    out[kind] = kind === undo ? offered : offered.filter(keeps);
  }
  return out;
}

/** How many of `n` nodes a target names at most. */
function sizeOf(target: string, n: number): number {
  switch (target as Target) {
    case 'minority':
      return Math.max(1, Math.floor(n / 2));
    case 'majority':
      return Math.min(n, majoritySize(n));
    case 'all':
      return n;
    default:
      return 1;
  }
}

/**
 * The most nodes a kept `kill` or `pause` family may leave down at once in a cluster of `n`: the
 * largest of its targets (`kill:one` → 1, so two kills in a row never take a quorum of three);
 * undefined when the family takes every target.
 */
export function downLimit(family: FaultFamily, targets: FaultTargets, n: number): number | undefined {
  const kept = targets[family];
  if (kept === undefined) return undefined;
  return Math.max(...kept.map((t) => sizeOf(t, n)));
}
