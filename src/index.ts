export type { Op, OpType, ProcessId } from './core/op.js';
export type { Event, EventSource, EventAttrs } from './core/event.js';
export type {
  Fault,
  FaultKind,
  FaultFamily,
  FaultValue,
  Target,
  PartitionShape,
  PacketParams,
} from './core/fault.js';
export type { State } from './core/state.js';
export { Rng } from './core/random.js';

// Writing a system adapter (docs/writing-a-system.md).
export type {
  SystemDefinition,
  SystemOptions,
  SystemSetting,
  SystemAdapter,
  ClusterView,
  LaunchSpec,
  LaunchOptions,
  KvClient,
  ClientResult,
  MicroOp,
  TransactionsCapability,
  LeaderCapability,
  MembershipCapability,
  TxnClient,
  GuardedTxnClient,
  TxnGuard,
  TxnResult,
  TxnWorkloadName,
  TxnClientContext,
  SetCapability,
  SetClient,
  SetReadResult,
  CounterCapability,
  CounterClient,
  Bank,
  BankCapability,
  BankClient,
  BankReadResult,
  ParsedLogEvent,
  DoctorFinding,
  NodeSystem,
  Readiness,
  ReadyCheck,
} from './systems/system.js';
export { READ_CONSISTENCIES, type ReadConsistency } from './check/sequential-reads.js';
export { DURABILITIES, type Durability } from './check/durability.js';
export type { ConsistencyModel } from './check/txn/consistency-model.js';
export type { Address } from './cluster/net/backend.js';
export { checkBinary } from './systems/check-binary.js';
export { matchLogRules, type LogRule } from './systems/log-rules.js';
export { GENERIC_CRASH_PATTERNS } from './check/logs.js';
export { loadSystem, type LoadedSystem } from './systems/load-system.js';
export { UsageError } from './core/errors.js';

// Running a campaign from code, as `mallory run` does.
export { runCampaign as run, type RunConfigInput, type RunOptions } from './campaign/run-campaign.js';
export type { RunConfig, PolicyName } from './campaign/config.js';
export type { Reporter, RunSummary, Progress } from './campaign/reporter.js';
export type { BugRecord, BugKind } from './campaign/bug.js';
export type { ScheduleChecker, ScheduleCheckInput, Finding } from './campaign/checker.js';
export type { ScheduleEntry, FaultOutcome } from './nemesis/nemesis.js';
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
export { checkSet, type SetCheckResult, type SetAnomaly, type SetAnomalyType } from './check/check-set.js';
export { checkCounter, type CounterCheckResult, type CounterViolation } from './check/check-counter.js';

// Writing a workload (docs/writing-a-workload.md).
export {
  checkBank,
  BANK_ERROR_TYPES,
  type BankCheckOptions,
  type BankCheckResult,
  type BankError,
  type BankErrorType,
} from './check/check-bank.js';
export {
  WORKLOADS,
  type WorkloadName,
  type WorkloadDefinition,
  type WorkloadContext,
  type Workload,
  type OpCounts,
} from './workload/workload.js';
export type { WorkloadChecker, WorkloadVerdict, WorkloadCheckContext } from './workload/workload-checker.js';
export type { History } from './workload/history.js';
export {
  ClientWorkload,
  type ClientOp,
  type ClientWorkloadOptions,
  type CallOutcome,
} from './workload/client-workload.js';
export type { Closable } from './workload/close-client.js';
export { BUILTIN_WORKLOADS, workloadRefusal } from './workload/registry.js';
export { loadWorkload, type LoadedWorkload } from './workload/load-workload.js';
export { writeRunReport } from './report/write-run-report.js';
export { writeStoreIndex } from './report/store-index.js';
export { ResultsSchema, RESULTS_VERSION, type Results } from './report/results.js';
