import type { Fault, FaultKind, FaultValue } from '../core/fault.js';
import type { Rng } from '../core/random.js';
import type { TriggeredAction } from '../core/trigger.js';

/** The faults the nemesis can enact now: every enabled kind with the values it accepts. */
export interface ActionSpace {
  readonly kinds: readonly FaultKind[];
  valuesOf(kind: FaultKind): readonly FaultValue[];
  /**
   * Whether the kind has anything to act on in the cluster's state now (`resume` with a node
   * paused, `member-add` with a member removed, `kill` with room under its kept targets); a space
   * without it takes every kind as enactable.
   */
  enactable?(kind: FaultKind): boolean;
}

/** The kinds of the space that can be enacted now. */
export function enactableKinds(space: ActionSpace): readonly FaultKind[] {
  return space.enactable === undefined
    ? space.kinds
    : space.kinds.filter((k) => space.enactable?.(k) !== false);
}

export interface DecideContext {
  /** The abstract state of the window that just closed; undefined when it has not arrived yet. */
  readonly state: string | undefined;
  readonly space: ActionSpace;
  readonly rng: Rng;
  readonly schedule: number;
  readonly step: number;
}

/** What a policy that arms triggers is told besides the state: the event types observed so far. */
export interface ArmContext extends DecideContext {
  /** The event types observed so far, the least recently seen first (client and nemesis ops excluded). */
  readonly eventTypes: readonly string[];
  /**
   * The fault enacted at this step's start, just before arming (`null`: none): a trigger acts on
   * what that fault sets in motion, so what a trigger on an event type is worth depends on it.
   */
  readonly enacted?: Fault | null;
}

/** What happened after an action: the state of the window in which it acted. */
export interface Transition {
  readonly state: string | undefined;
  readonly action: Fault | null;
  readonly next: string;
  /** How many times `next` had been seen before this window (0 = new). */
  readonly seenBefore: number;
  /** The trigger armed for the window (policies that arm triggers), `null` for none. */
  readonly armed?: TriggeredAction | null;
  /** Whether the armed trigger fired within the window. */
  readonly fired?: boolean;
}

/** A row of the saved policy (Q-table or counts), stored in run.db `policy_values`. */
export interface PolicyValue {
  readonly state: string;
  readonly action: string;
  readonly value: number;
  readonly visits: number;
}

/**
 * A kept fault sequence as campaigns share it (`--exchange`): per decided step, the fault enacted
 * and the trigger armed, and whether its window reached a new state.
 */
export interface SharedSequence {
  readonly steps: readonly { readonly fault: Fault | null; readonly armed: TriggeredAction | null }[];
  readonly novel: readonly boolean[];
}

/** Where a plan leaves a decision to the policy. */
export const FREE = 'free';

/**
 * A sequence a schedule replayed, in decided steps (a quiet step of `--pace` decides nothing): per
 * step, the fault to enact and the trigger to arm, or `free` where the policy decided; and how it
 * was made from the kept ones (`cut`, `drop`, `free`, `splice`).
 */
export interface FollowedSequence {
  readonly mutation: string;
  readonly steps: readonly {
    readonly fault: Fault | null | typeof FREE;
    readonly armed: TriggeredAction | null | typeof FREE;
  }[];
}

/** `replayed a kept fault sequence (cut: 4 steps, 3 of them whole)`: for the progress lines. */
export function describeFollowed(seq: FollowedSequence): string {
  const whole = seq.steps.filter((p) => p.fault !== FREE && p.armed !== FREE).length;
  return `replayed a kept fault sequence (${seq.mutation}: ${seq.steps.length} steps, ${whole} of them whole), then decided its own`;
}

/** Chooses the next fault (or `null`, the no-op) from the current abstract state. */
export interface Policy {
  readonly name: string;
  decide(ctx: DecideContext): Fault | null;
  /**
   * A second decision per step, for policies that arm triggers: which triggered action to arm for
   * the rest of the step (after `decide`'s fault is enacted), or `null` for none.
   */
  arm?(ctx: ArmContext): TriggeredAction | null;
  learn(transition: Transition): void;
  /**
   * What this schedule's decisions followed when they were not all the policy's own (a replayed
   * sequence of the corpus), asked once the schedule's steps have run; undefined otherwise.
   */
  episode?(): FollowedSequence | undefined;
  /** Called at the start of each schedule (the cluster was reset). */
  resetEpisode?(): void;
  save(): readonly PolicyValue[];
  /** Sets the saved rows (of an earlier campaign: `--seed-from`), replacing this campaign's. */
  load(values: readonly PolicyValue[]): void;
  /**
   * Adds rows another campaign learned (`visits` = the visits it added since it was last merged),
   * each merged with this campaign's row by visits (`--exchange`). A policy that learns nothing
   * has none.
   */
  merge?(values: readonly PolicyValue[]): void;
  /** The fault sequences this policy kept from its own schedules (a corpus), to share. */
  sequences?(): readonly SharedSequence[];
  /** Adds sequences another campaign kept; returns how many were new here. */
  adoptSequences?(sequences: readonly SharedSequence[]): number;
}
