import { NS_PER_MS } from '../core/clock.js';
import { FAMILY_KINDS, type FaultFamily } from '../core/fault.js';
import type { Op } from '../core/op.js';
import { describeLinks, linkFaultOf } from '../nemesis/grudge.js';
import type { StoredFault, StoredSchedule, StoredStep } from '../store/run-reader.js';

/** A fault as the report places it: at ms since the run started. */
export interface TimedFault {
  readonly schedule: number;
  readonly step: number | null;
  readonly atMs: number;
  readonly f: string;
  readonly value: unknown;
  readonly nodes: readonly string[];
  readonly outcome: 'ok' | 'skipped' | 'error';
  /** Why it errored or was skipped. */
  readonly error: string | null;
  /** Its grudge, for a fault on links: the sides of a partition (`n1,n3 | n2`), the target of a packet fault. */
  readonly grudge: string | null;
}

/** The nemesis skips a fault, without a message, when its target names no node it can act on. */
const NO_TARGET = 'no node it could act on';
/** How the history marks a schedule line that was not run (`--schedule`). */
const SKIPPED_PREFIX = 'skipped: ';

/** How long a node was under one fault: from the fault to what undid it. */
export interface FaultWindow {
  readonly node: string;
  readonly family: FaultFamily;
  /** The fault that opened it, e.g. `kill`. */
  readonly f: string;
  readonly fromMs: number;
  readonly toMs: number;
  /** What closed it: its stop fault, the reset between schedules, or the end of the run. */
  readonly endedBy: 'stop' | 'reset' | 'end';
  /** The grudge of the fault that opened it (a fault on links), e.g. `n1,n3 | n2`. */
  readonly grudge?: string;
}

/** A fault that acts at one moment (one no family window opens or closes): no window. */
export interface FaultMark {
  readonly node: string;
  readonly f: string;
  readonly atMs: number;
}

/** The faults that start each family's window (all but the last of its kinds), and the one that ends it (the last). */
const OPENS = new Map<string, FaultFamily>(
  Object.entries(FAMILY_KINDS).flatMap(([family, kinds]) =>
    kinds.slice(0, -1).map((open) => [open, family as FaultFamily] as const),
  ),
);
const CLOSES = new Map<string, FaultFamily>(
  Object.entries(FAMILY_KINDS).map(([family, kinds]) => [kinds[kinds.length - 1], family as FaultFamily]),
);

/** Faults that end a node's process: a node paused before one is no longer paused (it restarts running). */
const ENDS_PROCESS: ReadonlySet<string> = new Set(['kill', 'lose-unfsynced']);

/**
 * Each node's fault windows, from the faults in time order and the times of the resets (which undo
 * every fault). Only faults that took effect (`ok`) count. A stop without nodes (a partition healed
 * everywhere) closes the family's windows on every node; a start on a node already under the same
 * family closes its window and opens the new one (a new partition shape). A kill ends a pause: the
 * process that was stopped is gone, and the node restarts running.
 */
export function faultWindows(
  faults: readonly TimedFault[],
  resetsMs: readonly number[],
  endMs: number,
): { readonly windows: FaultWindow[]; readonly marks: FaultMark[] } {
  const open = new Map<
    string,
    { node: string; family: FaultFamily; f: string; fromMs: number; grudge?: string }
  >();
  const windows: FaultWindow[] = [];
  const marks: FaultMark[] = [];
  const close = (key: string, atMs: number, endedBy: FaultWindow['endedBy']): void => {
    const w = open.get(key);
    if (!w) return;
    open.delete(key);
    windows.push({ ...w, toMs: Math.max(w.fromMs, atMs), endedBy });
  };
  const events = [
    ...faults.filter((f) => f.outcome === 'ok').map((f) => ({ atMs: f.atMs, fault: f })),
    ...resetsMs.map((atMs) => ({ atMs, fault: undefined })),
  ].sort((a, b) => a.atMs - b.atMs);
  for (const { atMs, fault } of events) {
    if (!fault) {
      for (const key of [...open.keys()]) close(key, atMs, 'reset');
      continue;
    }
    if (fault.f === 'heal-all') {
      // Every fault undone at once (a quiet period, or its line in a replayed schedule).
      for (const key of [...open.keys()]) close(key, atMs, 'stop');
      continue;
    }
    if (ENDS_PROCESS.has(fault.f)) {
      for (const node of fault.nodes) close(`pause\0${node}`, atMs, 'stop');
    }
    const opens = OPENS.get(fault.f);
    const closes = CLOSES.get(fault.f);
    if (opens) {
      for (const node of fault.nodes) {
        const key = `${opens}\0${node}`;
        close(key, atMs, 'stop');
        open.set(key, {
          node,
          family: opens,
          f: fault.f,
          fromMs: atMs,
          ...(fault.grudge !== null ? { grudge: fault.grudge } : {}),
        });
      }
    } else if (closes) {
      const nodes =
        fault.nodes.length > 0
          ? fault.nodes
          : [...open.values()].filter((w) => w.family === closes).map((w) => w.node);
      for (const node of nodes) close(`${closes}\0${node}`, atMs, 'stop');
    } else {
      for (const node of fault.nodes) marks.push({ node, f: fault.f, atMs });
    }
  }
  for (const key of [...open.keys()]) close(key, endMs, 'end');
  return { windows: windows.sort((a, b) => a.fromMs - b.fromMs || a.node.localeCompare(b.node)), marks };
}

/** The union of the windows of each family over all nodes: the intervals to shade on a plot. */
export function familyIntervals(windows: readonly FaultWindow[]): {
  readonly family: FaultFamily;
  readonly fromMs: number;
  readonly toMs: number;
  readonly nodes: readonly string[];
}[] {
  const out: { family: FaultFamily; fromMs: number; toMs: number; nodes: string[] }[] = [];
  const byFamily = new Map<FaultFamily, FaultWindow[]>();
  for (const w of windows) byFamily.set(w.family, [...(byFamily.get(w.family) ?? []), w]);
  for (const [family, ws] of byFamily) {
    const sorted = [...ws].sort((a, b) => a.fromMs - b.fromMs);
    let current: (typeof out)[number] | undefined;
    for (const w of sorted) {
      if (current && w.fromMs <= current.toMs) {
        current.toMs = Math.max(current.toMs, w.toMs);
        if (!current.nodes.includes(w.node)) current.nodes.push(w.node);
      } else {
        current = { family, fromMs: w.fromMs, toMs: w.toMs, nodes: [w.node] };
        out.push(current);
      }
    }
  }
  return out.sort((a, b) => a.fromMs - b.fromMs);
}

/**
 * When each schedule's reset undid its faults: just after its last step ended (steps are recorded
 * by policy runs); for a fixed schedule, `scheduleMs` after its start or at its end if sooner.
 */
export function resetTimes(
  schedules: readonly StoredSchedule[],
  steps: readonly StoredStep[],
  scheduleMs: number,
  endMs: number,
): number[] {
  return schedules.map((s) => {
    const own = steps.filter((st) => st.schedule === s.idx).map((st) => st.endedMs ?? st.startedMs);
    if (own.length > 0) return Math.max(...own);
    return Math.min(s.endedMs ?? endMs, s.startedMs + scheduleMs);
  });
}

/**
 * Every fault tried, in time order at ms since the run started: the stored ones (kept relative to
 * their schedule), and the schedule lines the history says were not run (`skipped: …`), which
 * never reach the nemesis.
 */
export function timedFaults(
  faults: readonly StoredFault[],
  schedules: readonly StoredSchedule[],
  ops: readonly Op[],
): TimedFault[] {
  const start = new Map(schedules.map((s) => [s.idx, s.startedMs]));
  const scheduleAt = (ms: number): number =>
    schedules.reduce((found, s) => (s.startedMs <= ms ? s.idx : found), schedules[0]?.idx ?? 0);
  const stored = faults.map((f) => ({
    schedule: f.schedule,
    step: f.step,
    atMs: (start.get(f.schedule) ?? 0) + f.atMs,
    f: f.f,
    value: f.value,
    nodes: f.nodes,
    outcome: f.outcome,
    error: f.error ?? (f.outcome === 'skipped' ? NO_TARGET : null),
    grudge: describeLinks(f.nodes, f.links ?? undefined, [], linkFaultOf(f.f)) ?? null,
  }));
  const notRun = ops
    .filter((op) => op.process === 'nemesis' && op.error?.startsWith(SKIPPED_PREFIX) === true)
    .map((op) => {
      const atMs = Math.round(op.time / NS_PER_MS);
      return {
        schedule: scheduleAt(atMs),
        step: null,
        atMs,
        f: op.f,
        value: op.value,
        nodes: [],
        outcome: 'skipped' as const,
        error: op.error!.slice(SKIPPED_PREFIX.length),
        grudge: null,
      };
    });
  return [...stored, ...notRun].sort((a, b) => a.atMs - b.atMs);
}
