export type { Op, OpType, ProcessId } from './core/op.js';
export type { Event, EventSource, EventAttrs } from './core/event.js';
export type { Fault, FaultKind, FaultValue, Target, PartitionShape } from './core/fault.js';
export type { State } from './core/state.js';
export { Rng } from './core/random.js';
export type {
  SystemAdapter,
  SystemDefinition,
  KvClient,
  ClientResult,
  MicroOp,
  TransactionsCapability,
  TxnClient,
  TxnResult,
  TxnWorkloadName,
} from './systems/system.js';
export type { Policy } from './policy/policy.js';
export { createProbe, type Probe } from './probe/index.js';
export {
  checkOps,
  checkOpStream,
  type CheckOptions,
  type Counterexample,
  type LinearizabilityResult,
  type Model,
  type ModelName,
} from './check/linearizable.js';
export { renderLinearizabilityHtml } from './check/linearizable-html.js';
