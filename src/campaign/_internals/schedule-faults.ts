import type { Fault } from '../../core/fault.js';
import { BudgetReached, untilAborted } from '../../core/fault-call.js';
import type { FaultOutcome, ScheduleEntry } from '../../nemesis/nemesis.js';
import { triggeredLines } from '../armed-trigger.js';
import { isLet, type FaultItem, type RecordedLine, type ScheduleItem } from '../schedule-file.js';
import type { LiveRun } from './live-run.js';

/**
 * One schedule's faults as it enacts them, each recorded in the history, the store and the
 * reporters: those that took effect and every one tried.
 */
export class ScheduleFaults {
  /** The faults that took effect: what the checkers and a bug record see. */
  readonly faults: ScheduleEntry[] = [];
  /** Every fault tried, errored and skipped ones too: what a bug's schedule file keeps. */
  readonly attempted: RecordedLine[] = [];

  constructor(
    private readonly live: LiveRun,
    readonly schedule: number,
    readonly scheduleStart: number,
    /** The end of the run's time budget (ms since the epoch): no fault starts after it. */
    private readonly budgetEnd = Infinity,
  ) {}

  /**
   * Enacts `fault` at step `step` (null: no step, as a fixed schedule's reset). `recorded` is what
   * a schedule line resolved to, `triggered` says the fault waited for an event, `line` is the
   * fired trigger's line as a bug's schedule file keeps it.
   */
  async enact(
    fault: Fault,
    step: number | null,
    recorded?: ScheduleEntry,
    triggered = false,
    line?: FaultItem,
    asked?: { readonly leader: string | undefined },
  ): Promise<void> {
    const { history, parts, state } = this.live;
    const now = this.live.clock.nowMs();
    // The budget bounds the faults: a fault decided after it (a slow one before it took the
    // time) is said and skipped; only the reset and the checks follow the budget.
    if (now >= this.budgetEnd) {
      this.skip(line ?? { ...fault, atMs: now - this.scheduleStart }, 'past the time budget (--time)');
      return;
    }
    const atMs = now - this.scheduleStart;
    const runMs = now - state.startMs;
    // Who led just before the fault, so a replay can aim it at the same roles (a schedule
    // line waiting on an event is not delayed by the question).
    const stop = this.untilBudget(now);
    let outcome: FaultOutcome;
    let leader: string | undefined;
    try {
      leader =
        triggered || fault.f === 'heal-all'
          ? undefined
          : asked !== undefined
            ? asked.leader
            : await untilAborted(parts.nemesis.leader(), stop.signal).then((r) =>
                r.settled ? r.value : undefined,
              );
      if (line) history.record({ type: 'info', process: 'nemesis', f: 'trigger', value: line });
      history.record({ type: 'info', process: 'nemesis', f: fault.f, value: fault.value });
      // Cut short at the budget (or Ctrl-C), it comes back as an error that says so.
      outcome = await parts.nemesis.enact(fault, recorded, stop.signal);
    } finally {
      stop.cancel();
    }
    history.record({
      type: 'info',
      process: 'nemesis',
      f: fault.f,
      value: outcome.nodes.length > 0 ? outcome.nodes : fault.value,
      ...(outcome.error !== undefined ? { error: outcome.error } : {}),
    });
    this.record(outcome, step, atMs, runMs, line);
    const entry: ScheduleEntry = {
      atMs,
      f: fault.f,
      value: outcome.value ?? fault.value,
      nodes: outcome.nodes,
      ...(outcome.links && (fault.f === 'start-partition' || fault.f === 'start-packet')
        ? { links: outcome.links }
        : {}),
      ...(leader !== undefined ? { leader } : {}),
    };
    if (outcome.outcome === 'ok') this.faults.push(entry);
    const how =
      outcome.outcome === 'ok'
        ? {}
        : {
            outcome: outcome.outcome,
            ...(outcome.error !== undefined ? { error: outcome.error } : {}),
          };
    // A fired trigger is kept as written (its event, delay and `$E`), so a replay waits for
    // the event again rather than faulting the nodes of that moment at that time.
    const drawn = outcome.value !== undefined ? { value: outcome.value } : {};
    if (line) this.attempted.push(...triggeredLines(line), { ...line, ...drawn, ...how });
    else this.attempted.push({ ...entry, ...how });
  }

  /** A signal that fires at the end of the time budget, or when the run is stopped. */
  private untilBudget(now: number): { readonly signal: AbortSignal; readonly cancel: () => void } {
    const { clock, config, signal } = this.live;
    if (!Number.isFinite(this.budgetEnd)) return { signal, cancel: () => undefined };
    const reached = new AbortController();
    const cancel = clock.timer(this.budgetEnd - now, () => {
      reached.abort(new BudgetReached(config.timeMs));
    });
    return { signal: AbortSignal.any([reached.signal, signal]), cancel };
  }

  /** A schedule line or trigger that found nothing to act on, in the history. */
  skip(item: ScheduleItem, reason: string): void {
    this.live.history.record({
      type: 'info',
      process: 'nemesis',
      f: isLet(item) ? 'let' : item.f,
      value: isLet(item) ? item.let : item.value,
      error: `skipped: ${reason}`,
    });
  }

  private record(
    outcome: FaultOutcome,
    step: number | null,
    atMs: number,
    runMs: number,
    trigger?: FaultItem,
  ): void {
    const { state, store, emit } = this.live;
    if (outcome.outcome === 'ok') state.faultCount++;
    store.fault({
      schedule: this.schedule,
      step,
      atMs,
      f: outcome.fault.f,
      value: outcome.value ?? outcome.fault.value,
      nodes: outcome.nodes,
      outcome: outcome.outcome,
      ...(outcome.error !== undefined ? { error: outcome.error } : {}),
      ...(trigger !== undefined ? { trigger } : {}),
      ...(outcome.links !== undefined && outcome.links.length > 0 ? { links: outcome.links } : {}),
    });
    emit('fault', outcome, this.schedule, atMs, runMs, this.live.clock.nowMs() - state.startMs);
  }
}
