import { monoNs } from '../../core/clock.js';
import type { Event } from '../../core/event.js';
import { roleOfText, roleOfValue, type Role } from '../../observe/role.js';
import { appendRole } from '../../store/role-file.js';

/** The most role lines kept per node: a system that logs its role on every heartbeat stops there. */
const MAX_ROLE_LINES = 100_000;

/**
 * The role an event gives its node: its `role` attribute (an adapter's probe event, a log rule's
 * capture, or what the log reader found in the line's text), else for a probe event the role its
 * type names (`become-leader`).
 */
export function roleOfEvent(event: Event): Role | undefined {
  if (event.source !== 'probe' && event.source !== 'log') return undefined;
  return roleOfValue(event.attrs?.role) ?? (event.source === 'probe' ? roleOfText(event.type) : undefined);
}

/**
 * Hears every event and records each role one gives its node into `nodes/<node>/roles.jsonl`, on
 * the run's time axis: what the report draws roles from, before any heuristic over log text.
 */
export function roleRecorder(runDir: string, runStartMs: number): (event: Event) => void {
  const counts = new Map<string, number>();
  return (event) => {
    const role = roleOfEvent(event);
    if (role === undefined) return;
    const count = counts.get(event.node) ?? 0;
    if (count >= MAX_ROLE_LINES) return;
    counts.set(event.node, count + 1);
    const atMs = Date.now() - (monoNs() - event.ts) / 1e6 - runStartMs;
    try {
      appendRole(runDir, event.node, { atMs: Math.round(atMs), role, event: event.type });
    } catch {
      // a node dir that is gone (a run being torn down): the role is not worth failing the run for
    }
  };
}
