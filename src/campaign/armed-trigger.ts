import type { Fault } from '../core/fault.js';
import type { TriggeredAction } from '../core/trigger.js';
import type { ScheduleEntry } from '../nemesis/nemesis.js';
import type { FaultItem, LetItem, ScheduleItem, Trigger } from './schedule-file.js';
import { ScheduleRunner, type ScheduleRunnerDeps } from './schedule-runner.js';

/** The name a triggered `let` binds to the event's node. */
export const EVENT_NODE = 'E';
const EVENT_REF = `$${EVENT_NODE}`;

/**
 * A triggered action as schedule lines armed at `atMs` (from the schedule's start) for `withinMs`:
 * a `let` binding the event's node (unless the target is the leader), then the fault, `delayMs`
 * after the event — what a bug's schedule file keeps, so a replay waits for the same event.
 */
export function triggerItems(action: TriggeredAction, atMs: number, withinMs: number): ScheduleItem[] {
  const on: Trigger = { type: action.on, withinMs: Math.max(1, Math.round(withinMs)) };
  const base = { atMs: Math.round(atMs), on, ...(action.delayMs > 0 ? { delayMs: action.delayMs } : {}) };
  const fault: FaultItem = { ...base, ...faultLine(action) };
  if (action.target === 'leader') return [fault];
  const bind: LetItem = { atMs: base.atMs, on, let: { [EVENT_NODE]: 'node' } };
  return [bind, fault];
}

function faultLine(action: TriggeredAction): Pick<FaultItem, 'f' | 'value' | 'nodes' | 'groups'> {
  const { f, target } = action;
  if (target === 'leader') return { f, value: 'leader' };
  if (target === 'isolate') return { f, value: null, groups: [[EVENT_REF], ['*']] };
  return { f, value: null, nodes: target === 'event' ? [EVENT_REF] : ['*', `!${EVENT_REF}`] };
}

/** What an armed trigger needs: the schedule runner's event source and roles, and the campaign's enact. */
export interface ArmedTriggerDeps extends Omit<ScheduleRunnerDeps, 'enact'> {
  /** Enacts the fault the trigger fired (`line`: how the schedule file writes it, with `on`). */
  enact(
    fault: Fault,
    recorded: Pick<ScheduleEntry, 'nodes' | 'links'>,
    atMs: number,
    line: FaultItem,
  ): Promise<void>;
}

/**
 * Arms a triggered action for the rest of a step: it fires, as the event is ingested, on the first
 * matching event after arming, and never once the step has ended (a delayed fault still waiting
 * then is dropped). Runs the action's lines through a `ScheduleRunner`, so its faults are enacted
 * one at a time like any schedule's.
 */
export class ArmedTrigger {
  readonly items: readonly ScheduleItem[];
  private fired = false;

  constructor(
    readonly action: TriggeredAction,
    readonly atMs: number,
    private readonly endAtMs: number,
    private readonly deps: ArmedTriggerDeps,
  ) {
    this.items = triggerItems(action, atMs, endAtMs - atMs);
  }

  /** Waits until the step ends (`endAtMs` after `scheduleStart`); true when the trigger fired. */
  async run(scheduleStart: number): Promise<boolean> {
    const fault = this.items.find((i): i is FaultItem => !('let' in i))!;
    const runner = new ScheduleRunner(this.items, {
      ...this.deps,
      enact: (f, recorded, atMs) => {
        this.fired = true;
        return this.deps.enact(f, recorded, atMs, fault);
      },
    });
    await runner.run(scheduleStart, this.endAtMs);
    return this.fired;
  }
}

/** The lines a bug's schedule keeps before a fired trigger's fault: the `let` binding `$E`, if it uses it. */
export function triggeredLines(line: FaultItem): LetItem[] {
  const names = [...(line.nodes ?? []), ...(line.groups ?? []).flat()];
  if (!names.some((n) => n.includes(EVENT_REF)) || line.on === undefined) return [];
  return [{ atMs: line.atMs, on: line.on, let: { [EVENT_NODE]: 'node' } }];
}
