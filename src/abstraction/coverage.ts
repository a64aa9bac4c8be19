import { describeFault, type Fault } from '../core/fault.js';
import type { State } from '../core/state.js';
import type { Window } from '../timeline/window.js';
import type { Abstraction } from './abstraction.js';
import { ArtifactAbstraction } from './artifact.js';
import { CausalAbstraction } from './causal.js';
import { crossPairs, intraPairs, isInternal } from './pairs.js';

/**
 * Coverage, updated once per window: distinct states under each abstraction, and measures no
 * policy optimises — distinct internal event types, distinct intra-node pairs (node ids dropped),
 * distinct cross-node causal pairs (no role labels), distinct (fault, state) transitions.
 *
 * It owns the abstractions, so one call per step gives the states for the policy too:
 * ```ts
 * const coverage = new Coverage();                    // artifact + causal
 * const window = await timeline.close(step, startTs, endTs);
 * const obs = coverage.observe(window, fault);        // fault enacted during this window
 * policy.learn({ state: prevState, action: fault, next: obs.states[abstractionName].id,
 *                seenBefore: obs.seenBefore[abstractionName] });
 * record(coverage.snapshot());                        // { states_causal: 12, event_types: 40, … }
 * ```
 * Call `resetEpisode()` at each schedule's start (forwards to stateful abstractions).
 */
export interface CoverageObservation {
  /** The window's state under each abstraction, by abstraction name. */
  readonly states: Readonly<Record<string, State>>;
  /** How many earlier windows had the same state, by abstraction name (0 = new). */
  readonly seenBefore: Readonly<Record<string, number>>;
}

export class Coverage {
  readonly abstractions: readonly Abstraction[];
  private readonly stateCounts = new Map<string, Map<string, number>>();
  /** Visits per state in the campaigns this one was seeded from: they count as seen, not as coverage. */
  private readonly priorCounts = new Map<string, Map<string, number>>();
  private readonly transitions = new Map<string, Set<string>>();
  private readonly eventTypes = new Set<string>();
  private readonly intra = new Set<string>();
  private readonly cross = new Set<string>();
  private windows = 0;

  constructor(abstractions: readonly Abstraction[] = [new ArtifactAbstraction(), new CausalAbstraction()]) {
    const names = new Set(abstractions.map((a) => a.name));
    if (names.size !== abstractions.length) {
      throw new RangeError(
        `Coverage needs abstractions with distinct names, got ${abstractions.map((a) => a.name).join(', ')}`,
      );
    }
    this.abstractions = abstractions;
    for (const a of abstractions) {
      this.stateCounts.set(a.name, new Map());
      this.transitions.set(a.name, new Set());
    }
  }

  observe(window: Window, fault: Fault | null): CoverageObservation {
    this.windows++;
    const states: Record<string, State> = {};
    const seenBefore: Record<string, number> = {};
    const action = describeFault(fault);
    for (const a of this.abstractions) {
      const state = a.abstract(window);
      const counts = this.stateCounts.get(a.name)!;
      const n = counts.get(state.id) ?? 0;
      counts.set(state.id, n + 1);
      states[a.name] = state;
      seenBefore[a.name] = n + (this.priorCounts.get(a.name)?.get(state.id) ?? 0);
      this.transitions.get(a.name)!.add(`${action}\u0000${state.id}`);
    }
    for (const e of window.events) if (isInternal(e)) this.eventTypes.add(e.type);
    intraPairs(window.events, this.intra);
    crossPairs(window, this.cross);
    return { states, seenBefore };
  }

  resetEpisode(): void {
    for (const a of this.abstractions) a.resetEpisode?.();
  }

  /**
   * Seeds one state of an earlier campaign (call in the order they were first seen): the
   * abstraction re-creates its cluster, and its visits make the novelty reward see it as known.
   * Returns the state's id here: the one the abstraction assigns to `features` (sorted), which is
   * `id` unless another campaign clustered it differently; undefined for an unknown abstraction.
   */
  seed(abstraction: string, id: string, features: readonly string[], visits: number): string | undefined {
    const a = this.abstractions.find((x) => x.name === abstraction);
    if (!a) return undefined;
    const local = a.seed?.(features) ?? id;
    let prior = this.priorCounts.get(abstraction);
    if (!prior) this.priorCounts.set(abstraction, (prior = new Map<string, number>()));
    prior.set(local, (prior.get(local) ?? 0) + visits);
    return local;
  }

  /** Visits per state id under one abstraction (to save, or to seed a later campaign). */
  counts(abstraction: string): ReadonlyMap<string, number> {
    return this.stateCounts.get(abstraction) ?? new Map();
  }

  snapshot(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const a of this.abstractions) {
      out[`states_${a.name}`] = this.stateCounts.get(a.name)!.size;
    }
    out.event_types = this.eventTypes.size;
    out.intra_pairs = this.intra.size;
    out.cross_pairs = this.cross.size;
    for (const a of this.abstractions) out[`transitions_${a.name}`] = this.transitions.get(a.name)!.size;
    out.windows = this.windows;
    return out;
  }
}
