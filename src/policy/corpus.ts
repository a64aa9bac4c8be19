import type { Fault } from '../core/fault.js';
import type { Rng } from '../core/random.js';
import type { TriggeredAction } from '../core/trigger.js';
import {
  FREE,
  type ArmContext,
  type DecideContext,
  type FollowedSequence,
  type Policy,
  type PolicyValue,
  type SharedSequence,
  type Transition,
} from './policy.js';
import { TriggeredPolicy, type TriggeredOptions } from './triggered.js';

/**
 * `corpus`: `triggered`, plus a corpus of fault sequences, as greybox fuzzers keep inputs. A
 * schedule's sequence — per step, the fault enacted and the trigger armed — is kept when one of its
 * windows reached a state never seen before. Every `replayEvery`-th schedule (every other one by
 * default), once the corpus has a sequence, the policy takes a kept sequence (those with more new
 * states and fewer replays first), cuts it after one of its new-state steps, mutates it (drop a
 * step, leave one decision to the policy, or splice on a stretch of another kept sequence that led
 * to a new state) and replays it; after the replayed steps, `triggered` decides as usual. So a sequence that reached a state is
 * extended from there rather than found again from nothing: what a bug that needs several faults in
 * order (a trigger among them) takes.
 *
 * The replayed steps teach `triggered` as its own do (they are real transitions). Saved rows are
 * `triggered`'s; the corpus is the run's own.
 */
export interface CorpusOptions extends TriggeredOptions {
  /** Every how many schedules one replays a mutated sequence of the corpus (0: never). */
  readonly replayEvery?: number;
  /** How many sequences the corpus keeps (the least productive go first). */
  readonly size?: number;
}

export const DEFAULT_REPLAY_EVERY = 2;
export const DEFAULT_CORPUS_SIZE = 64;

/** One step of a sequence: the fault enacted at its start and the trigger armed after it. */
export interface Gene {
  readonly fault: Fault | null;
  readonly armed: TriggeredAction | null;
}

/** A step of a plan: a decision to replay, or `FREE` for the policy's own. */
export type PlannedStep = FollowedSequence['steps'][number];

/** A kept sequence and, per step, whether its window was new. */
export interface CorpusEntry {
  readonly genes: readonly Gene[];
  readonly novel: readonly boolean[];
  picks: number;
  /** Kept by another campaign and taken from it (`--exchange`): not shared again. */
  readonly shared?: boolean;
}

/** How a plan was made from the corpus (for reports and tests). */
export type Mutation = 'cut' | 'drop' | 'free' | 'splice';
const MUTATIONS: readonly Mutation[] = ['cut', 'drop', 'free', 'splice'];

interface Trace {
  readonly genes: Gene[];
  readonly novel: boolean[];
}

export class CorpusPolicy implements Policy {
  readonly name = 'corpus';
  private readonly inner: TriggeredPolicy;
  private readonly replayEvery: number;
  private readonly size: number;
  private readonly kept: CorpusEntry[] = [];
  private trace: Trace = { genes: [], novel: [] };
  /** What this schedule replays, decided at its first step (undefined: its own decisions). */
  private followed: (FollowedSequence & { readonly mutation: Mutation }) | undefined;
  private episodes = 0;
  /** Schedules that replayed a sequence of the corpus. */
  replays = 0;

  constructor(options: CorpusOptions = {}) {
    this.inner = new TriggeredPolicy(options);
    this.replayEvery = options.replayEvery ?? DEFAULT_REPLAY_EVERY;
    this.size = options.size ?? DEFAULT_CORPUS_SIZE;
    if (!(Number.isInteger(this.replayEvery) && this.replayEvery >= 0)) {
      throw new RangeError(`corpus replayEvery should be a non-negative integer, got ${this.replayEvery}`);
    }
    if (!(Number.isInteger(this.size) && this.size >= 1)) {
      throw new RangeError(`corpus size should be a positive integer, got ${this.size}`);
    }
  }

  /** The kept sequences (for reports and tests). */
  get corpus(): readonly CorpusEntry[] {
    return this.kept;
  }

  /** The plan this schedule replays (undefined: none), decided at its first step. */
  get currentPlan(): readonly PlannedStep[] | undefined {
    return this.followed?.steps;
  }

  /** How the plan was made from the corpus, if the schedule replays one. */
  get lastMutation(): Mutation | undefined {
    return this.followed?.mutation;
  }

  episode(): FollowedSequence | undefined {
    return this.followed;
  }

  resetEpisode(): void {
    this.keep(this.trace);
    this.trace = { genes: [], novel: [] };
    this.followed = undefined;
    this.episodes++;
    this.inner.resetEpisode();
  }

  decide(ctx: DecideContext): Fault | null {
    // Plans and traces count decided steps (a quiet step of `--pace` decides nothing).
    const at = this.trace.genes.length;
    const turn = this.replayEvery > 0 && this.episodes % this.replayEvery === 0;
    if (at === 0 && turn && this.kept.length > 0) {
      this.followed = this.mutate(ctx.rng);
      this.replays++;
    }
    const planned = this.followed?.steps[at]?.fault;
    let fault: Fault | null;
    if (planned === undefined || planned === FREE) fault = this.inner.decide(ctx);
    else {
      fault = planned;
      this.inner.follow(fault);
    }
    this.trace.genes.push({ fault, armed: null });
    return fault;
  }

  arm(ctx: ArmContext): TriggeredAction | null {
    const at = this.trace.genes.length - 1;
    const planned = this.followed?.steps[at]?.armed;
    let armed: TriggeredAction | null;
    if (planned === undefined || planned === FREE) armed = this.inner.arm(ctx);
    else {
      armed = planned;
      this.inner.followArm();
    }
    const gene = this.trace.genes[at];
    if (gene !== undefined) this.trace.genes[at] = { ...gene, armed };
    return armed;
  }

  learn(t: Transition): void {
    this.inner.learn(t);
    this.trace.novel.push(t.seenBefore === 0);
  }

  save(): readonly PolicyValue[] {
    return this.inner.save();
  }

  load(values: readonly PolicyValue[]): void {
    this.inner.load(values);
  }

  merge(values: readonly PolicyValue[]): void {
    this.inner.merge(values);
  }

  sequences(): readonly SharedSequence[] {
    return this.kept.filter((e) => e.shared !== true).map((e) => ({ steps: e.genes, novel: e.novel }));
  }

  adoptSequences(sequences: readonly SharedSequence[]): number {
    const known = new Set(this.kept.map((e) => JSON.stringify(e.genes)));
    let added = 0;
    for (const s of sequences) {
      const genes = JSON.stringify(s.steps);
      if (known.has(genes) || !s.novel.includes(true) || s.novel.length !== s.steps.length) continue;
      known.add(genes);
      this.add({ genes: s.steps, novel: s.novel, picks: 0, shared: true });
      added++;
    }
    return added;
  }

  /** Keeps a finished schedule's sequence, cut after its last new-state step, if it had one. */
  private keep(trace: Trace): void {
    // Steps decided and learned from pair up in order (a quiet step has neither).
    const n = Math.min(trace.genes.length, trace.novel.length);
    const last = trace.novel.slice(0, n).lastIndexOf(true);
    if (last < 0) return;
    this.add({ genes: trace.genes.slice(0, last + 1), novel: trace.novel.slice(0, last + 1), picks: 0 });
  }

  /** Adds an entry; past the corpus's size, the entry of least energy goes. */
  private add(entry: CorpusEntry): void {
    this.kept.push(entry);
    if (this.kept.length > this.size) {
      let worst = 0;
      for (let i = 1; i < this.kept.length; i++)
        if (energy(this.kept[i]) < energy(this.kept[worst])) worst = i;
      this.kept.splice(worst, 1);
    }
  }

  /** A plan from the corpus: a kept sequence cut after one of its new states, mutated once. */
  private mutate(rng: Rng): { readonly steps: PlannedStep[]; readonly mutation: Mutation } {
    const entry = this.pick(rng);
    let plan: PlannedStep[] = cutAtNovel(entry, rng);
    const mutation = rng.pick(MUTATIONS);
    if (mutation === 'drop' && plan.length > 1) plan.splice(rng.int(plan.length), 1);
    else if (mutation === 'free') {
      const i = rng.int(plan.length);
      plan[i] = rng.chance(0.5) ? { ...plan[i], fault: FREE } : { ...plan[i], armed: FREE };
    } else if (mutation === 'splice') {
      const other = cutAtNovel(this.pick(rng), rng);
      plan = [...plan, ...other.slice(rng.int(other.length))];
    }
    return { steps: plan, mutation };
  }

  /** A kept sequence, weighted by its energy: more new states, fewer replays so far. */
  private pick(rng: Rng): CorpusEntry {
    const weights = this.kept.map(energy);
    let u = rng.next() * weights.reduce((a, b) => a + b, 0);
    for (let i = 0; i < this.kept.length; i++) {
      u -= weights[i];
      if (u < 0) {
        this.kept[i].picks++;
        return this.kept[i];
      }
    }
    const last = this.kept[this.kept.length - 1];
    last.picks++;
    return last;
  }
}

function energy(e: CorpusEntry): number {
  return (1 + e.novel.filter(Boolean).length) / (1 + e.picks);
}

/** The entry's steps up to one of its new-state steps (chosen at random). */
function cutAtNovel(e: CorpusEntry, rng: Rng): PlannedStep[] {
  const at = e.novel.flatMap((n, i) => (n ? [i] : []));
  return e.genes.slice(0, rng.pick(at) + 1);
}
