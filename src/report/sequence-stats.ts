import type { StoredSchedule, StoredStep } from '../store/run-reader.js';

/** What a group of schedules reached: how many, their windows, and how many windows were new. */
export interface ScheduleGroupStat {
  readonly schedules: number;
  readonly windows: number;
  readonly newStates: number;
}

/** The schedules that replayed a kept fault sequence against those that decided on their own. */
export interface SequenceStats {
  readonly replayed: ScheduleGroupStat;
  readonly own: ScheduleGroupStat;
}

/**
 * Whether replaying kept fault sequences pays: new states per window of the schedules that replayed
 * one, against the others' (the first schedule, which had nothing to replay, counts as the
 * policy's own). Undefined for a run that replayed none.
 */
export function sequenceStats(
  schedules: readonly StoredSchedule[],
  steps: readonly StoredStep[],
): SequenceStats | undefined {
  if (!schedules.some((s) => s.followed)) return undefined;
  const followed = new Set(schedules.filter((s) => s.followed).map((s) => s.idx));
  const group = (replayed: boolean): ScheduleGroupStat => {
    const mine = steps.filter((s) => followed.has(s.schedule) === replayed && s.state !== null);
    return {
      schedules: schedules.filter((s) => s.followed === replayed).length,
      windows: mine.length,
      newStates: mine.filter((s) => s.newState).length,
    };
  };
  return { replayed: group(true), own: group(false) };
}
