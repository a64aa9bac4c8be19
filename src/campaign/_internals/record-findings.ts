import type { Finding } from '../checker.js';
import type { LiveRun } from './live-run.js';
import { recordBug } from './record-bug.js';
import type { ScheduleFaults } from './schedule-faults.js';

/**
 * What the schedule's checks found: each note said in the history and to the reporters, then
 * each bug recorded.
 */
export function recordFindings(live: LiveRun, scheduled: ScheduleFaults, findings: readonly Finding[]): void {
  const { history, emit } = live;
  for (const note of findings.filter((f) => f.severity === 'note')) {
    history.record({
      type: 'info',
      process: 'nemesis',
      f: `${note.kind}/${note.name}`,
      value: null,
      error: note.message,
    });
    emit('message', `  schedule ${scheduled.schedule + 1}: ${note.message}`);
  }
  for (const finding of findings.filter((f) => f.severity !== 'note')) {
    recordBug(live, scheduled, finding);
  }
}
