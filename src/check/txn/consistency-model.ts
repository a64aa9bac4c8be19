import type { AnomalyType, CycleBase } from './anomaly.js';

/** The consistency models a transactional history can be checked against, strongest first. */
export const CONSISTENCY_MODELS = [
  'strict-serializable',
  'serializable',
  'snapshot-isolation',
  'repeatable-read',
  'read-committed',
  'read-uncommitted',
] as const;
export type ConsistencyModel = (typeof CONSISTENCY_MODELS)[number];

/**
 * What Elle checks for when not told otherwise (its `:consistency-models` default), and what a
 * database that promises serializable transactions on a replicated store usually means.
 */
export const DEFAULT_CONSISTENCY: ConsistencyModel = 'strict-serializable';

export function isConsistencyModel(name: unknown): name is ConsistencyModel {
  return typeof name === 'string' && (CONSISTENCY_MODELS as readonly string[]).includes(name);
}

const CYCLE_BASES: readonly CycleBase[] = ['G0', 'G1c', 'G-single', 'G-nonadjacent', 'G2-item'];

/**
 * What each model forbids. Read uncommitted, read committed, repeatable read, snapshot isolation
 * and serializability are Adya's PL-1, PL-2, PL-2.99, PL-SI and PL-3 (Adya, "Weak Consistency",
 * MIT 1999, ch. 3-4), on item histories, where G2 is G2-item and G-SI shows as G-single; strict
 * serializability is PL-SS (same, section 4.3): no cycle even with realtime edges, of which
 * process edges are a subset. As in Elle (Kingsbury & Alvaro, VLDB 2020): `internal` is forbidden
 * from snapshot isolation up (Cerone et al.'s INT axiom); `incompatible-order` and `dirty-update`
 * count as G1a (an order no committed state explains, a write built on an aborted one), and so
 * does `future-read` (a read of what its own transaction writes only afterwards, as Elle has it);
 * `duplicate-elements` and `garbage-read` (a value no transaction wrote) break even PL-1.
 * `lost-update` (two committed transactions that read one version of a key and both wrote it) is
 * forbidden from repeatable read and snapshot isolation up (Adya's P4, Berenson et al. 1995; Elle
 * likewise): it is a cycle of two adjacent rw edges, which G-single alone does not catch.
 * `G-nonadjacent` (a cycle whose rw edges, two or more, are never two in a row) is what snapshot
 * isolation forbids beyond G-single: SI holds exactly when every cycle has two rw edges in a row
 * (Cerone & Gotsman, PODC 2016); Elle forbids it from snapshot isolation up. It is a G2-item too,
 * so repeatable read forbids it as well.
 */
const READ_UNCOMMITTED: readonly AnomalyType[] = ['G0', 'duplicate-elements', 'garbage-read'];
const READ_COMMITTED: readonly AnomalyType[] = [
  ...READ_UNCOMMITTED,
  'G1a',
  'G1b',
  'G1c',
  'incompatible-order',
  'dirty-update',
  'future-read',
];
const REPEATABLE_READ: readonly AnomalyType[] = [
  ...READ_COMMITTED,
  'G-single',
  'G-nonadjacent',
  'G2-item',
  'lost-update',
];
const SNAPSHOT_ISOLATION: readonly AnomalyType[] = [
  ...READ_COMMITTED,
  'G-single',
  'G-nonadjacent',
  'internal',
  'lost-update',
];
const SERIALIZABLE: readonly AnomalyType[] = [...REPEATABLE_READ, 'internal'];
const STRICT_SERIALIZABLE: readonly AnomalyType[] = [
  ...SERIALIZABLE,
  ...CYCLE_BASES.flatMap((base): AnomalyType[] => [`${base}-process`, `${base}-realtime`]),
];

const FORBIDDEN: Readonly<Record<ConsistencyModel, ReadonlySet<AnomalyType>>> = {
  'strict-serializable': new Set(STRICT_SERIALIZABLE),
  serializable: new Set(SERIALIZABLE),
  'snapshot-isolation': new Set(SNAPSHOT_ISOLATION),
  'repeatable-read': new Set(REPEATABLE_READ),
  'read-committed': new Set(READ_COMMITTED),
  'read-uncommitted': new Set(READ_UNCOMMITTED),
};

/** Models each model directly implies (a history valid under the key is valid under these). */
const IMPLIES: Readonly<Record<ConsistencyModel, readonly ConsistencyModel[]>> = {
  'strict-serializable': ['serializable'],
  serializable: ['snapshot-isolation', 'repeatable-read'],
  'snapshot-isolation': ['read-committed'],
  'repeatable-read': ['read-committed'],
  'read-committed': ['read-uncommitted'],
  'read-uncommitted': [],
};

/** The anomaly types a model forbids: one of them in a history rules the model out. */
export function anomaliesForbiddenBy(model: ConsistencyModel): ReadonlySet<AnomalyType> {
  return FORBIDDEN[model];
}

export interface ModelBoundary {
  /** Models the anomalies rule out, the weakest only: every stronger model is ruled out too. */
  readonly ruledOut: readonly ConsistencyModel[];
  /** Models the anomalies found do not rule out (the history may still break them elsewhere). */
  readonly notRuledOut: readonly ConsistencyModel[];
}

/** Which models a set of anomaly types rules out, and which survive. */
export function modelBoundary(types: Iterable<AnomalyType>): ModelBoundary {
  const found = [...types];
  const broken = CONSISTENCY_MODELS.filter((model) => found.some((type) => FORBIDDEN[model].has(type)));
  const weakerBroken = (model: ConsistencyModel): boolean =>
    IMPLIES[model].some((weaker) => broken.includes(weaker) || weakerBroken(weaker));
  return {
    ruledOut: broken.filter((model) => !weakerBroken(model)),
    notRuledOut: CONSISTENCY_MODELS.filter((model) => !broken.includes(model)),
  };
}
