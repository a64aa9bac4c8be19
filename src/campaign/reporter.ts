import type { RunTiming } from '../core/run-timing.js';
import type { CheckpointSummary } from '../store/checkpoint-files.js';
import type { FaultOutcome } from '../nemesis/nemesis.js';
import type { BugRecord, SimulatedBug } from './bug.js';
import type { RunVerdict } from '../core/verdict.js';

export interface Progress {
  readonly elapsedMs: number;
  readonly budgetMs: number;
  readonly schedule: number;
  readonly step: number;
  readonly steps: number;
  readonly ok: number;
  readonly fail: number;
  readonly info: number;
  /** Fails whose connection was refused (a node down), apart from `fail`. */
  readonly refused?: number;
  readonly faults: number;
  readonly bugs: number;
  readonly states?: number;
  readonly phase: 'starting' | 'fuzzing' | 'checking' | 'resetting' | 'stopping';
}

export interface RunSummary {
  readonly runDir: string;
  readonly status: 'complete' | 'interrupted' | 'error';
  readonly system: string;
  readonly seed: number;
  readonly policy: string;
  readonly elapsedMs: number;
  readonly schedules: number;
  readonly ops: {
    readonly ok: number;
    readonly fail: number;
    readonly info: number;
    readonly refused?: number;
  };
  readonly faults: number;
  /** Where the run's wall time went, against `--time` (see run-timing.ts). */
  readonly timing?: RunTiming;
  readonly bugs: readonly BugRecord[];
  /** Every schedule's checks merged (Jepsen's `:valid?`), and each check's tally. */
  readonly verdict: RunVerdict;
  readonly metrics: Readonly<Record<string, number>>;
  /**
   * A simulated run's world (`--sim`): its seed, disks' contract, cuts' semantics, and `digest`, a
   * hash of every event of the world in order with its virtual time (starts, ends, faults, probe
   * events, output lines, the events run, the generator's next value): equal for two runs of one
   * seed, so a fleet can re-run one campaign as a check of determinism.
   */
  readonly sim?: SimulatedBug & { readonly digest: string };
  /** What the run's checkpoints cost and which it kept, when it took any. */
  readonly checkpoints?: CheckpointSummary;
  readonly error?: string;
  /** The run's report.html, written once the run ended (see `mallory report`). */
  readonly report?: string;
  /** Why the report could not be written (the run itself is stored). */
  readonly reportError?: string;
}

/** Hooks on the run's events; the progress line, JSON lines and reports are reporters. */
export interface Reporter {
  runStarted?(info: {
    runDir: string;
    system: string;
    seed: number;
    policy: string;
    nodes: readonly string[];
  }): void;
  progress?(progress: Progress): void;
  /**
   * A fault enacted (or skipped, or failed): `atMs` is ms since its schedule started (as `run.db`
   * keeps it), `runMs` ms since the run started (the one clock every view shows), `doneRunMs` when
   * its outcome came, on the same clock (a membership change may take many seconds).
   */
  fault?(outcome: FaultOutcome, schedule: number, atMs: number, runMs: number, doneRunMs?: number): void;
  bug?(bug: BugRecord): void;
  message?(text: string): void;
  runEnded?(summary: RunSummary): void;
}
