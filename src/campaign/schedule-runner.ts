import type { Link } from '../cluster/net/backend.js';
import { type Clock, realClock } from '../core/clock.js';
import type { Event } from '../core/event.js';
import type { Fault } from '../core/fault.js';
import type { ScheduleEntry } from '../nemesis/nemesis.js';
import { type FaultItem, isLet, type LetItem, type ScheduleItem, type Trigger } from './schedule-file.js';

/** What the runner needs from the campaign. */
export interface ScheduleRunnerDeps {
  /** Enacts one resolved fault (the campaign records it). */
  /** `triggered`: the line waited for an event (its moment is the event's, not to be delayed). */
  /**
   * `asked`: who led when the runner asked just before (a line recorded with its moment's leader),
   * so the campaign records it without asking again: a second question would delay the fault.
   */
  enact(
    fault: Fault,
    recorded: Pick<ScheduleEntry, 'nodes' | 'links'>,
    atMs: number,
    triggered: boolean,
    asked?: { readonly leader: string | undefined },
  ): Promise<void>;
  /** Records a line that could not run (an unbound name, no node for a role). */
  skip(item: ScheduleItem, reason: string): void;
  /** Every node of the cluster, members or not. */
  nodes(): readonly string[];
  /** The current leader, if the system knows one. */
  leader(): Promise<string | undefined>;
  /** Running members, for `follower`. */
  running(): readonly string[];
  /** Subscribes to observed events; returns the unsubscribe. */
  onEvent(listener: (event: Event) => void): () => void;
  readonly signal: AbortSignal;
  /** The time the lines are due by (default the host's). */
  readonly clock?: Clock;
}

interface TriggerGroup {
  readonly atMs: number;
  readonly on: Trigger;
  readonly items: ScheduleItem[];
  armedAtNs: number | undefined;
  fired: boolean;
}

class Unresolved extends Error {}

/**
 * Runs a schedule file: timed lines at their time, triggered lines when their event is observed,
 * all enacted one at a time in the order they became due (the nemesis is never driven twice at once).
 */
export class ScheduleRunner {
  private readonly vars = new Map<string, string>();
  private chain: Promise<void> = Promise.resolve();
  private readonly timers = new Set<() => void>();
  private readonly clock: Clock;
  private scheduleStart = 0;
  private budgetAtMs = Infinity;
  /** The first error that is not a line's own failure (an unbound name): it ends the run. */
  private failure: { error: unknown } | undefined;
  private readonly failed = new AbortController();

  constructor(
    private readonly items: readonly ScheduleItem[],
    private readonly deps: ScheduleRunnerDeps,
  ) {
    this.clock = deps.clock ?? realClock;
  }

  /**
   * Runs until `endAtMs` after `scheduleStart` (and until every due line has run); lines due after
   * `endAtMs` are skipped, and so is a line that a slow fault before it carried past `budgetAtMs`
   * (the campaign's budget, or the end itself when it bounds the faults). A line's failure is its
   * own outcome (the nemesis reports it); anything else a line throws stops the schedule and is
   * rethrown here.
   */
  async run(scheduleStart: number, endAtMs: number, budgetAtMs = endAtMs): Promise<void> {
    this.scheduleStart = scheduleStart;
    this.budgetAtMs = budgetAtMs;
    const stop = AbortSignal.any([this.deps.signal, this.failed.signal]);
    const groups = new Map<string, TriggerGroup>();
    const timed: (ScheduleItem | TriggerGroup)[] = [];
    for (const item of this.items) {
      if (item.on === undefined) {
        timed.push(item);
        continue;
      }
      const key = `${item.atMs}\u0000${JSON.stringify(item.on)}`;
      let group = groups.get(key);
      if (!group) {
        group = { atMs: item.atMs, on: item.on, items: [], armedAtNs: undefined, fired: false };
        groups.set(key, group);
        timed.push(group);
      }
      group.items.push(item);
    }
    timed.sort((a, b) => a.atMs - b.atMs);
    const armed: TriggerGroup[] = [];
    const unsubscribe = this.deps.onEvent((event) => {
      for (const group of armed) {
        if (group.fired || group.armedAtNs === undefined || event.ts < group.armedAtNs) continue;
        if (
          group.on.withinMs !== undefined &&
          this.clock.nowMs() > this.scheduleStart + group.atMs + group.on.withinMs
        ) {
          continue;
        }
        if (!this.matches(group.on, event)) continue;
        group.fired = true;
        for (const item of group.items) this.later(item, event, item.delayMs ?? 0);
      }
    });
    try {
      for (const [i, entry] of timed.entries()) {
        if (entry.atMs > endAtMs) {
          // Past the time budget: said in the history, never silently dropped.
          for (const rest of timed.slice(i)) {
            for (const item of 'items' in rest ? rest.items : [rest]) {
              this.deps.skip(item, `at ${item.atMs} ms, past the end of the run (${endAtMs} ms)`);
            }
          }
          break;
        }
        await this.clock.sleep(scheduleStart + entry.atMs - this.clock.nowMs(), stop);
        if (stop.aborted) return;
        // A slow fault before it (a membership change that took its time) may have carried the
        // schedule past its end: the budget bounds the faults, so what is left is skipped.
        if (this.clock.nowMs() > scheduleStart + budgetAtMs) {
          for (const rest of timed.slice(i)) {
            for (const item of 'items' in rest ? rest.items : [rest]) {
              this.deps.skip(
                item,
                `due at ${item.atMs} ms, reached past the end of the run (${budgetAtMs} ms)`,
              );
            }
          }
          break;
        }
        if ('items' in entry) {
          entry.armedAtNs = this.clock.monoNs();
          armed.push(entry);
        } else {
          await this.enqueue(entry, undefined);
        }
      }
      await this.clock.sleep(scheduleStart + endAtMs - this.clock.nowMs(), stop);
    } finally {
      unsubscribe();
      for (const cancel of this.timers) cancel();
      this.timers.clear();
      await this.chain;
      // Rethrown after the finally's waits, so it is not lost to a return above.
      // eslint-disable-next-line no-unsafe-finally
      if (this.failure) throw this.failure.error;
    }
  }

  private later(item: ScheduleItem, event: Event, delayMs: number): void {
    // At once, not through a timer: a timer's turn costs a millisecond or more.
    if (delayMs <= 0) {
      void this.enqueue(item, event);
      return;
    }
    const cancel = this.clock.timer(delayMs, () => {
      this.timers.delete(cancel);
      void this.enqueue(item, event);
    });
    this.timers.add(cancel);
  }

  private enqueue(item: ScheduleItem, event: Event | undefined): Promise<void> {
    const run = this.chain.then(() =>
      this.deps.signal.aborted || this.failure ? undefined : this.execute(item, event),
    );
    this.chain = run.catch((error: unknown) => {
      this.failure ??= { error };
      this.failed.abort();
    });
    return this.chain;
  }

  private matches(on: Trigger, event: Event): boolean {
    if (event.type !== on.type) return false;
    if (on.node !== undefined && event.node !== this.name(on.node)) return false;
    for (const [k, v] of Object.entries(on.attrs ?? {})) {
      const actual = event.attrs?.[k];
      if (actual === undefined || String(actual) !== String(typeof v === 'string' ? this.name(v) : v)) {
        return false;
      }
    }
    return true;
  }

  /** A name as written: `$X` is the variable's node (undefined if unbound), anything else itself. */
  private name(text: string): string | undefined {
    return text.startsWith('$') ? this.vars.get(text.slice(1)) : text;
  }

  private resolve(text: string): string {
    const node = this.name(text);
    if (node === undefined) throw new Unresolved(`${text} is not bound`);
    return node;
  }

  /** `["*", "!$C"]` → every node but C's. */
  private resolveNodes(list: readonly string[]): string[] {
    let out: string[] = [];
    for (const entry of list) {
      if (entry === '*') out.push(...this.deps.nodes().filter((n) => !out.includes(n)));
      else if (entry.startsWith('!')) {
        const gone = this.resolve(entry.slice(1));
        out = out.filter((n) => n !== gone);
      } else {
        const n = this.resolve(entry);
        if (!out.includes(n)) out.push(n);
      }
    }
    return out;
  }

  private groupLinks(groups: readonly (readonly string[])[]): Link[] {
    const named = groups.map((g) => this.resolveNodes(g.filter((n) => n !== '*')));
    const taken = new Set(named.flat());
    const rest = this.deps.nodes().filter((n) => !taken.has(n));
    const resolved = groups.map((g, i) => (g.includes('*') ? [...named[i], ...rest] : named[i]));
    const links: Link[] = [];
    for (let i = 0; i < resolved.length; i++) {
      for (let j = 0; j < resolved.length; j++) {
        if (i === j) continue;
        for (const a of resolved[i]) for (const b of resolved[j]) if (a !== b) links.push([a, b]);
      }
    }
    return links;
  }

  private async execute(item: ScheduleItem, event: Event | undefined): Promise<void> {
    // Queued behind a slow fault (or a trigger's delay) until past the end: not enacted.
    if (this.clock.nowMs() > this.scheduleStart + this.budgetAtMs) {
      this.deps.skip(item, `reached past the end of the run (${this.budgetAtMs} ms)`);
      return;
    }
    try {
      if (isLet(item)) await this.bind(item, event);
      else await this.fault(item, event !== undefined);
    } catch (e) {
      if (e instanceof Unresolved) this.deps.skip(item, e.message);
      else throw e;
    }
  }

  private async bind(item: LetItem, event: Event | undefined): Promise<void> {
    const chosen: string[] = [];
    let leader: string | undefined;
    const unbound: string[] = [];
    for (const [name, role] of Object.entries(item.let)) {
      let node: string | undefined;
      if (role === 'leader') node = leader ??= await this.deps.leader();
      else if (role === 'follower') {
        leader ??= await this.deps.leader();
        node = this.deps.running().find((n) => n !== leader && !chosen.includes(n));
      } else if (role === 'node') node = event?.node;
      else {
        const value = event?.attrs?.[role.slice('attrs.'.length)];
        node = value === undefined ? undefined : String(value);
      }
      if (node === undefined) {
        this.vars.delete(name);
        unbound.push(`${name} (${role})`);
      } else {
        this.vars.set(name, node);
        chosen.push(node);
      }
    }
    if (unbound.length > 0) throw new Unresolved(`no node for ${unbound.join(', ')}`);
  }

  private async fault(item: FaultItem, triggered: boolean): Promise<void> {
    const recorded: { nodes?: readonly string[]; links?: readonly Link[] } = {};
    // A line recorded with the leader of its moment meets the same roles now: if another node
    // leads, the two swap names in the line.
    const now = item.leader !== undefined ? await this.deps.leader() : undefined;
    const swap = (n: string): string =>
      now === undefined || now === item.leader ? n : n === item.leader ? now : n === now ? item.leader! : n;
    if (item.nodes) recorded.nodes = this.resolveNodes(item.nodes).map(swap);
    if (item.links) {
      recorded.links = item.links.map(([a, b]): Link => [swap(this.resolve(a)), swap(this.resolve(b))]);
    }
    if (item.groups) recorded.links = this.groupLinks(item.groups).map(([a, b]): Link => [swap(a), swap(b)]);
    await this.deps.enact(
      { f: item.f, value: item.value },
      recorded,
      this.clock.nowMs() - this.scheduleStart,
      triggered,
      item.leader !== undefined ? { leader: now } : undefined,
    );
  }
}
