import { type Clock, realClock } from '../../core/clock.js';
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

/** The event name of a role line that came from the adapter's `leader()` answer. */
export const LEADER_ANSWER = 'leader-answer';

/**
 * Records each role a node is given into `nodes/<node>/roles.jsonl`, on the run's time axis: what
 * the report draws roles from, before any heuristic over log text. Roles come from the adapter's
 * events (`hear`) and from its `leader()` answers (`leaderAnswered`): the node answered as leader
 * leads from then on, and a node that led only by an earlier answer follows once another is
 * answered. A node's own events are not overruled by an answer naming another node.
 */
export class RoleRecorder {
  private readonly counts = new Map<string, number>();
  private readonly last = new Map<string, { readonly role: Role; readonly byAnswer: boolean }>();

  constructor(
    private readonly runDir: string,
    private readonly runStartMs: number,
    private readonly clock: Clock = realClock,
  ) {}

  readonly hear = (event: Event): void => {
    const role = roleOfEvent(event);
    if (role === undefined) return;
    const atMs = this.clock.nowMs() - (this.clock.monoNs() - event.ts) / 1e6 - this.runStartMs;
    this.append(event.node, role, event.type, atMs, false);
  };

  readonly leaderAnswered = (leader: string): void => {
    const atMs = this.clock.nowMs() - this.runStartMs;
    if (this.last.get(leader)?.role !== 'leader') this.append(leader, 'leader', LEADER_ANSWER, atMs, true);
    for (const [node, last] of this.last) {
      if (node !== leader && last.role === 'leader' && last.byAnswer) {
        this.append(node, 'follower', LEADER_ANSWER, atMs, true);
      }
    }
  };

  private append(node: string, role: Role, event: string, atMs: number, byAnswer: boolean): void {
    const count = this.counts.get(node) ?? 0;
    if (count >= MAX_ROLE_LINES) return;
    this.counts.set(node, count + 1);
    this.last.set(node, { role, byAnswer });
    try {
      appendRole(this.runDir, node, { atMs: Math.round(atMs), role, event });
    } catch {
      // a node dir that is gone (a run being torn down): the role is not worth failing the run for
    }
  }
}
