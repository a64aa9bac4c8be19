import { roleOfText, type Role } from '../observe/role.js';
import type { FaultWindow } from './fault-windows.js';

/** A node announcing a role, at ms since the run started. */
export interface RoleChange {
  readonly node: string;
  readonly atMs: number;
  readonly role: Role;
}

/** How long a node held a role by its own account. */
export interface RoleSpan {
  readonly node: string;
  readonly role: Role;
  readonly fromMs: number;
  readonly toMs: number;
}

/** An ISO-8601 time (`2026-11-30T21:00:24.679Z`, `2026-11-30 21:00:24.679+0000`) in a log line. */
const ISO_TIME = /\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?/;

/** The wall-clock time (ms since the epoch) a log line carries, if it has one. */
export function lineTimeMs(line: string): number | undefined {
  const m = ISO_TIME.exec(line);
  if (!m) return undefined;
  const text = m[0].replace(' ', 'T').replace(/([+-]\d{2})(\d{2})$/, '$1:$2');
  const ms = Date.parse(text);
  return Number.isFinite(ms) ? ms : undefined;
}

/** `raft.node: A elected leader B at term 2` (etcd's raft): news of another node's election. */
const ELECTED_OTHER = /(\S+) elected leader (\S+)/i;

/** Whether the line reports that some other node became leader (so this one follows it). */
function otherLeader(line: string): boolean {
  const m = ELECTED_OTHER.exec(line);
  return m !== null && m[1] !== m[2];
}

/**
 * The role change a node's log line announces, placed on the run's time axis by the line's own
 * wall-clock time (`runStartMs`: the run's start, ms since the epoch). Lines without a time or a
 * role give `undefined`.
 */
export function roleChangeOfLine(node: string, line: string, runStartMs: number): RoleChange | undefined {
  const role = otherLeader(line) ? 'follower' : roleOfText(line);
  if (role === undefined) return undefined;
  const wall = lineTimeMs(line);
  if (wall === undefined) return undefined;
  return { node, atMs: wall - runStartMs, role };
}

/**
 * Each node's roles as spans: a role lasts until the node announces another, or until it stops
 * (killed, paused or removed: a node that cannot act holds no role), or to the end of the run.
 */
export function roleSpans(
  changes: readonly RoleChange[],
  windows: readonly FaultWindow[],
  endMs: number,
): RoleSpan[] {
  const stopped = new Set<FaultWindow['family']>(['kill', 'pause', 'member']);
  const points: { node: string; atMs: number; role: Role | undefined }[] = [
    ...changes.map((c) => ({ node: c.node, atMs: c.atMs, role: c.role })),
    ...windows
      .filter((w) => stopped.has(w.family))
      .map((w) => ({ node: w.node, atMs: w.fromMs, role: undefined })),
  ].sort((a, b) => a.atMs - b.atMs);
  const spans: RoleSpan[] = [];
  const current = new Map<string, { role: Role; fromMs: number }>();
  const close = (node: string, atMs: number): void => {
    const c = current.get(node);
    if (!c) return;
    current.delete(node);
    if (atMs > c.fromMs) spans.push({ node, role: c.role, fromMs: c.fromMs, toMs: atMs });
  };
  for (const p of points) {
    if (p.role !== undefined && current.get(p.node)?.role === p.role) continue;
    close(p.node, p.atMs);
    if (p.role !== undefined) current.set(p.node, { role: p.role, fromMs: p.atMs });
  }
  for (const node of [...current.keys()]) close(node, endMs);
  return spans.sort((a, b) => a.node.localeCompare(b.node) || a.fromMs - b.fromMs);
}
