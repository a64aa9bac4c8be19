/** Transactional checkers (list-append, rw-register) after Elle, and the consistency models. */
export { checkListAppend } from './check-list-append.js';
export { checkRwRegister } from './check-rw-register.js';
export type { TxnCheckOptions, TxnCheckResult } from './txn-check-result.js';
export {
  CONSISTENCY_MODELS,
  DEFAULT_CONSISTENCY,
  anomaliesForbiddenBy,
  isConsistencyModel,
  modelBoundary,
  type ConsistencyModel,
  type ModelBoundary,
} from './consistency-model.js';
export type {
  Anomaly,
  AnomalyMap,
  AnomalyOf,
  AnomalyType,
  CycleAnomaly,
  CycleAnomalyType,
  CycleBase,
  CycleStep,
  DependencyEdge,
  DirtyUpdateAnomaly,
  DuplicateAnomaly,
  IncompatibleOrderAnomaly,
  InternalAnomaly,
  ReadAnomaly,
  ReadAnomalyType,
} from './anomaly.js';
export type { ListAppendMicroOp, RwRegisterMicroOp, TxnOpInput, TxnScalar } from './txn-op.js';
export { HistoryError } from '../history/history-error.js';
