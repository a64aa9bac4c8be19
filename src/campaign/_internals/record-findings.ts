import type { BugHit } from '../bug.js';
import type { Finding } from '../checker.js';
import { findingSignature } from '../finding-groups.js';
import type { LiveRun } from './live-run.js';
import { recordBug } from './record-bug.js';
import type { ScheduleFaults } from './schedule-faults.js';

/**
 * What the schedule's checks found: each note said in the history and to the reporters, then
 * each bug recorded — or, when a bug of its signature was found before in the run, counted as a
 * hit of that one (its schedule listed, the first hit's kept for replay).
 */
export function recordFindings(live: LiveRun, scheduled: ScheduleFaults, findings: readonly Finding[]): void {
  const { history, emit, state } = live;
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
    const signature = findingSignature(finding);
    const hit: BugHit = {
      schedule: scheduled.schedule,
      foundAtMs: live.clock.nowMs() - state.startMs,
      message: finding.message,
    };
    const { isNew, group } = state.findingGroups.add(signature, hit);
    if (isNew) recordBug(live, scheduled, finding, signature, hit);
    else recordHit(live, signature, group.hits);
  }
}

/** A bug found again: its hits in the store and the summary, and a line to the reporters. */
function recordHit(live: LiveRun, signature: string, hits: readonly BugHit[]): void {
  const { state, store, emit } = live;
  const at = state.bugs.findIndex((b) => b.signature === signature);
  if (at < 0) return;
  const bug = { ...state.bugs[at], hits };
  state.bugs[at] = bug;
  store.setBugHits(bug.id, hits);
  const hit = hits[hits.length - 1];
  emit(
    'message',
    `  schedule ${hit.schedule + 1}: bug #${bug.id} [${bug.kind}] again (${hits.length} hits): ${hit.message.slice(0, 200)}`,
  );
}
