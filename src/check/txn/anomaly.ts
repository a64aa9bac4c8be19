import type { TxnOpInput, TxnScalar } from './txn-op.js';

/**
 * Cycle anomalies of Adya's thesis as Elle names them, and their process and realtime variants.
 * `G-nonadjacent`: two or more rw edges, no two of them in a row (Elle's name; a G2-item that
 * snapshot isolation forbids too).
 */
export type CycleBase = 'G0' | 'G1c' | 'G-single' | 'G-nonadjacent' | 'G2-item';
export type CycleAnomalyType = CycleBase | `${CycleBase}-process` | `${CycleBase}-realtime`;

/** Anomalies found without a cycle: in one transaction, one read or one key's version order. */
/** `future-read`: a read of a value its own transaction writes only later (Elle's name). */
export type ReadAnomalyType = 'G1a' | 'G1b' | 'garbage-read' | 'future-read';
export type AnomalyType =
  | CycleAnomalyType
  | ReadAnomalyType
  | 'internal'
  | 'duplicate-elements'
  | 'incompatible-order'
  | 'dirty-update'
  | 'lost-update';

/**
 * Why one transaction must come before the next in a cycle. `ww`: it wrote the version right before
 * the other's; `wr`: the other read what it wrote; `rw`: it read a version the other's write
 * replaced; `process`: same process, earlier; `realtime`: it completed before the other began.
 */
export type DependencyEdge =
  | {
      readonly type: 'ww';
      readonly key: TxnScalar;
      readonly value: TxnScalar;
      readonly next: TxnScalar;
      /**
       * Set when no read showed this order and snapshot isolation forces it: the first did not see
       * the second (rw), and two transactions that wrote one key cannot both miss each other.
       */
      readonly firstCommitterWins?: true;
    }
  | { readonly type: 'wr'; readonly key: TxnScalar; readonly value: TxnScalar }
  | {
      readonly type: 'rw';
      readonly key: TxnScalar;
      /** The last element (list-append) or the value (rw-register) read; `null`: none yet. */
      readonly read: TxnScalar | null;
      /** The value the later transaction wrote. */
      readonly value: TxnScalar;
    }
  | { readonly type: 'process'; readonly process: number | string }
  | { readonly type: 'realtime' };

/** A transaction of a cycle and the edge from it to the next one (the last step leads back). */
export interface CycleStep<T = TxnOpInput> {
  readonly op: T;
  readonly edge: DependencyEdge;
}

export interface CycleAnomaly<T = TxnOpInput> {
  readonly type: CycleAnomalyType;
  readonly cycle: readonly CycleStep<T>[];
  readonly explanation: string;
}

/** A committed read of a value an aborted (G1a), not final (G1b) or no (garbage) write produced. */
export interface ReadAnomaly<T = TxnOpInput> {
  readonly type: ReadAnomalyType;
  readonly op: T;
  readonly key: TxnScalar;
  readonly value: TxnScalar;
  /** The transaction that wrote `value`; absent for a garbage read. */
  readonly writer?: T;
  readonly explanation: string;
}

/** A read that disagrees with what its own transaction read or wrote before it. */
export interface InternalAnomaly<T = TxnOpInput> {
  readonly type: 'internal';
  readonly op: T;
  readonly key: TxnScalar;
  readonly read: readonly TxnScalar[] | TxnScalar | null;
  /** What the transaction's earlier micro-ops imply it must read (list-append: all or its end). */
  readonly expected: readonly TxnScalar[] | TxnScalar | null;
  /** False when only the end of the list is known (own appends, no earlier read). */
  readonly complete: boolean;
  readonly explanation: string;
}

export interface DuplicateAnomaly<T = TxnOpInput> {
  readonly type: 'duplicate-elements';
  readonly op: T;
  readonly key: TxnScalar;
  readonly value: TxnScalar;
  readonly read: readonly TxnScalar[];
  readonly explanation: string;
}

/** Two committed reads of a list neither of which is a prefix of the other. */
export interface IncompatibleOrderAnomaly<T = TxnOpInput> {
  readonly type: 'incompatible-order';
  readonly key: TxnScalar;
  readonly ops: readonly [T, T];
  readonly reads: readonly [readonly TxnScalar[], readonly TxnScalar[]];
  readonly explanation: string;
}

/** A committed write placed right after an aborted one in a key's version order. */
export interface DirtyUpdateAnomaly<T = TxnOpInput> {
  readonly type: 'dirty-update';
  readonly key: TxnScalar;
  readonly value: TxnScalar;
  readonly writer: T;
  readonly next: TxnScalar;
  readonly nextWriter: T;
  readonly explanation: string;
}

/**
 * Two or more committed transactions that each read the same version of a key and then wrote that
 * key (Elle's `lost-update`): all but one of their writes was made on a version another had
 * already replaced. Snapshot isolation forbids it (first committer wins), and so does repeatable
 * read; read committed allows it.
 */
export interface LostUpdateAnomaly<T = TxnOpInput> {
  readonly type: 'lost-update';
  readonly key: TxnScalar;
  /** The version they all read: the list (list-append) or the value (rw-register); null: none. */
  readonly read: readonly TxnScalar[] | TxnScalar | null;
  readonly ops: readonly T[];
  readonly explanation: string;
}

export type Anomaly<T = TxnOpInput> =
  | CycleAnomaly<T>
  | ReadAnomaly<T>
  | InternalAnomaly<T>
  | DuplicateAnomaly<T>
  | IncompatibleOrderAnomaly<T>
  | DirtyUpdateAnomaly<T>
  | LostUpdateAnomaly<T>;

/** The shape of the anomalies of one type. */
export type AnomalyOf<K extends AnomalyType, T = TxnOpInput> = K extends CycleAnomalyType
  ? CycleAnomaly<T>
  : K extends ReadAnomalyType
    ? ReadAnomaly<T>
    : Extract<Anomaly<T>, { readonly type: K }>;

/** The anomalies of a history grouped by type; a type with none found is absent. */
export type AnomalyMap<T = TxnOpInput> = { readonly [K in AnomalyType]?: readonly AnomalyOf<K, T>[] };
