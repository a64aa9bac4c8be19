import type { ScheduleChecker } from './checker.js';
import type { RunConfig } from './config.js';

/** The checks every campaign runs on each schedule (beyond the log and recovery checks). */
export function defaultCheckers(_config: RunConfig): ScheduleChecker[] {
  return [];
}
