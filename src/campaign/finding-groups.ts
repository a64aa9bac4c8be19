/**
 * One finding per root cause: findings with one signature are one finding with hits, within a run
 * (each schedule that finds it again is a hit of the bug recorded first) and across a fleet's
 * campaigns (`mallory fleet report`). Both group with this code.
 */

/**
 * The shape of a finding's evidence: its fields and their types, not their values (two lost
 * writes of different keys have one shape), to two levels.
 */
export function evidenceShape(value: unknown, depth = 2): string {
  if (value === null) return 'null';
  if (Array.isArray(value))
    return depth === 0 || value.length === 0 ? '[]' : `[${evidenceShape(value[0], depth - 1)}]`;
  if (typeof value === 'object') {
    if (depth === 0) return '{}';
    const keys = Object.keys(value).sort();
    return `{${keys.map((k) => `${k}:${evidenceShape((value as Record<string, unknown>)[k], depth - 1)}`).join(',')}}`;
  }
  return typeof value;
}

/** What a signature is made of: a finding's own, or its kind, name and evidence. */
export interface Signable {
  readonly kind: string;
  readonly name: string;
  readonly evidence: unknown;
  /** Set by a finding that names its root cause itself (a crash with its exit and no recovery). */
  readonly signature?: string | undefined;
}

/** What makes two findings one: kind, name and the shape of the evidence, unless it says its own. */
export function findingSignature(finding: Signable): string {
  return finding.signature ?? `${finding.kind}/${finding.name} ${evidenceShape(finding.evidence)}`;
}

/** Every hit of one signature, the first (earliest) one apart: it is what is replayed. */
export interface FindingGroup<T> {
  readonly signature: string;
  readonly first: T;
  /** Every hit, the first included, earliest first. */
  readonly hits: readonly T[];
}

/**
 * Groups hits by signature as they come: `add` says whether a hit is the first of its signature.
 * `earlier` orders the hits of one group (the first is the earliest).
 */
export class FindingGroups<T> {
  private readonly bySignature = new Map<string, T[]>();

  constructor(private readonly earlier: (a: T, b: T) => number = () => 0) {}

  /** Adds a hit; `isNew` when no hit had its signature before. */
  add(signature: string, hit: T): { readonly isNew: boolean; readonly group: FindingGroup<T> } {
    const hits = this.bySignature.get(signature);
    if (hits === undefined) {
      this.bySignature.set(signature, [hit]);
      return { isNew: true, group: { signature, first: hit, hits: [hit] } };
    }
    hits.push(hit);
    hits.sort(this.earlier);
    return { isNew: false, group: { signature, first: hits[0], hits: [...hits] } };
  }

  /** The groups, in the order their signatures were first seen. */
  groups(): FindingGroup<T>[] {
    return [...this.bySignature].map(([signature, hits]) => ({ signature, first: hits[0], hits: [...hits] }));
  }
}

/** `items` grouped by `signatureOf`, each group's hits ordered by `earlier`. */
export function groupBySignature<T>(
  items: Iterable<T>,
  signatureOf: (item: T) => string,
  earlier: (a: T, b: T) => number,
): FindingGroup<T>[] {
  const groups = new FindingGroups(earlier);
  for (const item of items) groups.add(signatureOf(item), item);
  return groups.groups();
}
