import type { Event } from '../core/event.js';

/** One broken invariant, with the probe events that show it. */
export interface InvariantViolation {
  readonly name: InvariantName;
  readonly message: string;
  readonly events: readonly Event[];
}

export type InvariantName =
  'election-safety' | 'vote-once-per-term' | 'commit-monotonic' | 'term-monotonic' | 'node-assertion';

/** Which nodes' events start a new incarnation (a restart): their volatile state starts afresh. */
const NODE_START = 'node-start';

function numberAttr(event: Event, name: string): number | undefined {
  const value = event.attrs?.[name];
  return typeof value === 'number' ? value : undefined;
}

function stringAttr(event: Event, name: string): string | undefined {
  const value = event.attrs?.[name];
  return typeof value === 'string' ? value : undefined;
}

/** The event types `checkInvariants` looks at by name (any other probe event counts only for its term). */
const NAMED = new Set([NODE_START, 'become-leader', 'vote-granted', 'commit-advance', 'assertion-failed']);

/**
 * Decides, event by event in each node's order, which events `checkInvariants` could need, so a
 * campaign keeps those and not every event of a schedule (most carry a term the node already had):
 * the checks give the same violations on the kept events as on all of them.
 */
export class InvariantEvents {
  private readonly terms = new Map<string, number>();

  keep(event: Event): boolean {
    if (event.source !== 'probe') return false;
    if (event.type === NODE_START) this.terms.delete(event.node);
    // Like the term check: the highest term of this incarnation; a lower one is always kept.
    const term = numberAttr(event, 'term');
    const highest = this.terms.get(event.node);
    if (term !== undefined && (highest === undefined || term > highest)) this.terms.set(event.node, term);
    return (term !== undefined && term !== highest) || NAMED.has(event.type);
  }
}

/**
 * Checks Raft safety properties over probe events (`source: 'probe'`; other events are ignored):
 * - election-safety: at most one node becomes leader in a term (`become-leader`, attr `term`);
 * - vote-once-per-term: a node grants its vote to one candidate per term, across restarts, unless
 *   it restarted with no state (`node-start` with term 0) (`vote-granted`, attrs `term`, `candidate`);
 * - commit-monotonic: a node's commit index never goes down within one incarnation
 *   (`commit-advance`, attr `commit`);
 * - term-monotonic: a node's term never goes down within one incarnation (any event with `term`);
 * - node-assertion: a node reported a failed assertion (`assertion-failed`).
 * Pure: the same events give the same violations, in event order.
 */
export function checkInvariants(events: readonly Event[]): InvariantViolation[] {
  const probes = events.filter((e) => e.source === 'probe').sort((a, b) => a.ts - b.ts);
  const violations: InvariantViolation[] = [];
  const leaders = new Map<number, Event>();
  const votes = new Map<string, Event>();
  const commits = new Map<string, Event>();
  const terms = new Map<string, Event>();

  for (const event of probes) {
    const node = event.node;
    const term = numberAttr(event, 'term');
    if (event.type === NODE_START) {
      commits.delete(node);
      terms.delete(node);
      if (term === 0) {
        for (const key of [...votes.keys()]) if (key.startsWith(`${node}\u0000`)) votes.delete(key);
      }
    }

    if (term !== undefined) {
      const last = terms.get(node);
      const lastTerm = last ? numberAttr(last, 'term') : undefined;
      if (last && lastTerm !== undefined && term < lastTerm) {
        violations.push({
          name: 'term-monotonic',
          message: `${node}'s term went from ${lastTerm} down to ${term} without a restart`,
          events: [last, event],
        });
      }
      if (lastTerm === undefined || term >= lastTerm) terms.set(node, event);
    }

    switch (event.type) {
      case 'become-leader': {
        if (term === undefined) break;
        const other = leaders.get(term);
        if (other && other.node !== node) {
          violations.push({
            name: 'election-safety',
            message: `two leaders in term ${term}: ${other.node} and ${node}`,
            events: [other, event],
          });
        } else if (!other) leaders.set(term, event);
        break;
      }
      case 'vote-granted': {
        const candidate = stringAttr(event, 'candidate');
        if (term === undefined || candidate === undefined) break;
        const key = `${node}\u0000${term}`;
        const earlier = votes.get(key);
        const earlierCandidate = earlier ? stringAttr(earlier, 'candidate') : undefined;
        if (earlier && earlierCandidate !== candidate) {
          violations.push({
            name: 'vote-once-per-term',
            message: `${node} voted for ${earlierCandidate ?? '?'} and then for ${candidate} in term ${term}`,
            events: [earlier, event],
          });
        } else if (!earlier) votes.set(key, event);
        break;
      }
      case 'commit-advance': {
        const commit = numberAttr(event, 'commit');
        if (commit === undefined) break;
        const last = commits.get(node);
        const lastCommit = last ? numberAttr(last, 'commit') : undefined;
        if (last && lastCommit !== undefined && commit < lastCommit) {
          violations.push({
            name: 'commit-monotonic',
            message: `${node}'s commit index went from ${lastCommit} down to ${commit}`,
            events: [last, event],
          });
        } else commits.set(node, event);
        break;
      }
      case 'assertion-failed':
        violations.push({
          name: 'node-assertion',
          message: `${node} reported a failed assertion`,
          events: [event],
        });
        break;
    }
  }
  return violations;
}
