import type { Op } from '../core/op.js';
import type { SystemAdapter } from '../systems/system.js';

/**
 * What a workload's checker says of one schedule's history. It returns a verdict and does not
 * throw because the history is wrong (a throw is a fault of the checker itself).
 */
export interface WorkloadVerdict {
  /** `false`: the history breaks what the workload checks (a bug); `'unknown'`: it cannot tell (a note). */
  readonly valid: boolean | 'unknown';
  /** One line: what is wrong and the ops that show it (the bug's message), or why it cannot tell. */
  readonly message?: string;
  /** Names the finding: the bug is `workload/<name>`. Default: the workload's name. */
  readonly name?: string;
  /** Written to the bug's `evidence.json`. */
  readonly evidence?: unknown;
}

/** What a workload's checker gets beside the history. */
export interface WorkloadCheckContext {
  /** The schedule (0-based) whose history this is. */
  readonly schedule: number;
  /** The system under test: what it promises (`readConsistency`, `durability`, …). */
  readonly system: SystemAdapter;
  /** The schedule's nemesis ops: its faults as the history records them (`process: 'nemesis'`). */
  readonly faults: readonly Op[];
}

/**
 * A workload's own check of each schedule's history: its client ops (invocations and
 * completions, in the order they happened; the final reads included), never the nemesis's.
 */
export type WorkloadChecker = (
  history: readonly Op[],
  context: WorkloadCheckContext,
) => WorkloadVerdict | Promise<WorkloadVerdict>;
