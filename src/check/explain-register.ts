import { type Op, pairOps } from '../core/op.js';
import type { LinearizabilityResult } from './linearizable.js';
import { canonical, canonicalKey, describeValue } from './models/value.js';

/**
 * What kind of register violation a counterexample is, in the words people who test databases use:
 *
 * - `never-written`: a read returned a value no op ever wrote.
 * - `failed-write-read`: a read returned a value only a write that definitely failed wrote.
 * - `resurrected`: a read returned a value that an earlier read (completed before it began) had
 *   already seen overwritten — the register went back in time.
 * - `lost-write`: a write was acknowledged, no read ever returned its value, and a read that began
 *   after the acknowledgement returned an older value.
 * - `stale-read`: a read that began after a write was acknowledged returned an older value, though
 *   other reads did see the newer one.
 * - `unexplained`: none of these fits (e.g. the failing op is a write or a cas); the
 *   counterexample stands on its own.
 */
export type RegisterAnomaly =
  'never-written' | 'failed-write-read' | 'resurrected' | 'lost-write' | 'stale-read' | 'unexplained';

export interface RegisterExplanation {
  readonly anomaly: RegisterAnomaly;
  /** One sentence naming the ops (process, node, time) that prove it. */
  readonly message: string;
  /** History indices of the ops it cites (their completions, else invokes). */
  readonly ops: readonly number[];
}

interface Call {
  readonly f: string;
  readonly process: Op['process'];
  readonly node: string | undefined;
  readonly invoke: Op;
  readonly completion: Op | undefined;
  /** The value written (write, or a cas's new value) or read; undefined for a read not `ok`. */
  readonly value: unknown;
}

const NS_PER_S = 1e9;

function outcome(call: Call): Op['type'] {
  return call.completion?.type ?? 'info';
}

function invokedAt(call: Call): number {
  return call.invoke.time;
}

/** When it completed; an op never completed counts as completing at the end of time. */
function completedAt(call: Call): number {
  return call.completion?.type === 'ok' || call.completion?.type === 'fail' ? call.completion.time : Infinity;
}

function same(a: unknown, b: unknown): boolean {
  return canonical(a) === canonical(b);
}

/** One key's calls: each invocation with its completion and the value it wrote or read. */
function calls(ops: readonly Op[]): Call[] {
  return pairOps(ops).map(({ invoke, completion }) => {
    const [, v] = (completion?.type === 'ok' ? completion.value : invoke.value) as [unknown, unknown];
    const value = invoke.f === 'cas' ? (Array.isArray(v) ? (v as unknown[])[1] : undefined) : v;
    return { f: invoke.f, process: invoke.process, node: invoke.node, invoke, completion, value };
  });
}

function describe(call: Call): string {
  const t = (ns: number): string => `${(ns / NS_PER_S).toFixed(3)} s`;
  const at =
    call.completion !== undefined && outcome(call) !== 'info'
      ? `${t(invokedAt(call))}–${t(call.completion.time)}`
      : `invoked ${t(invokedAt(call))}, never answered`;
  return `${call.f} ${describeValue(call.value)} by process ${String(call.process)}${call.node ? ` on ${call.node}` : ''} (${at})`;
}

function at(call: Call): number {
  return (call.completion ?? call.invoke).index;
}

function writes(all: readonly Call[]): Call[] {
  return all.filter((c) => c.f === 'write' || c.f === 'cas');
}

/**
 * Names the anomaly behind a register counterexample: `keyOps` are the ops of the violating key
 * (invokes and completions, in history order; values `[key, v]`), `failing` the op the checker
 * could not place (its invoke or completion). The classes are judged from real time and values
 * alone, so they assume what our workload guarantees: every write writes a value of its own.
 */
export function explainRegisterViolation(
  keyOps: readonly Op[],
  failing: Op,
  initial: unknown = null,
): RegisterExplanation {
  const isInitial = (value: unknown): boolean => same(value, initial);
  const all = calls(keyOps);
  const call = all.find((c) => c.invoke.index === failing.index || c.completion?.index === failing.index);
  if (call === undefined || call.f !== 'read' || outcome(call) !== 'ok') {
    return { anomaly: 'unexplained', message: 'the op cannot be placed in any order of the others', ops: [] };
  }
  const r = call.value;
  const writers = writes(all).filter((w) => same(w.value, r));
  const readFrom = (value: unknown): Call | undefined => writes(all).find((w) => same(w.value, value));
  if (!isInitial(r) && writers.length === 0) {
    return {
      anomaly: 'never-written',
      message: `${describe(call)} returned ${describeValue(r)}, a value no op wrote`,
      ops: [at(call)],
    };
  }
  if (!isInitial(r) && writers.every((w) => outcome(w) === 'fail')) {
    return {
      anomaly: 'failed-write-read',
      message: `${describe(call)} returned the value of ${describe(writers[0])}, which failed`,
      ops: [at(call), at(writers[0])],
    };
  }
  // A write is surely newer than r when it began after every write of r had completed.
  const rWritten = isInitial(r) ? -Infinity : Math.max(...writers.map(completedAt));
  const newer = (c: Call): boolean => invokedAt(c) > rWritten;
  const reads = all.filter((c) => c.f === 'read' && outcome(c) === 'ok' && c !== call);
  // The read's own process first: under sequential reads only its reads going back are a violation.
  const earlierRead = reads
    .filter((c) => completedAt(c) < invokedAt(call) && !isInitial(c.value) && !same(c.value, r))
    .sort((a, b) => Number(b.process === call.process) - Number(a.process === call.process))
    .map((c) => ({ read: c, writer: readFrom(c.value) }))
    .find(({ writer }) => writer !== undefined && newer(writer));
  if (earlierRead) {
    return {
      anomaly: 'resurrected',
      message: `${describe(call)} returned ${describeValue(r)}, though ${describe(earlierRead.read)} had already returned the newer ${describeValue(earlierRead.read.value)}`,
      ops: [at(call), at(earlierRead.read)],
    };
  }
  const overwrites = writes(all)
    .filter((w) => outcome(w) === 'ok' && completedAt(w) < invokedAt(call) && newer(w))
    .sort((a, b) => completedAt(b) - completedAt(a));
  const latest = overwrites.at(0);
  if (latest !== undefined) {
    const seenBy = reads.find((c) => same(c.value, latest.value));
    if (seenBy === undefined) {
      return {
        anomaly: 'lost-write',
        message: `${describe(latest)} was acknowledged and never read; ${describe(call)}, begun after it, returned ${isInitial(r) ? 'the initial value' : `the older ${describeValue(r)}`}`,
        ops: [at(latest), at(call)],
      };
    }
    return {
      anomaly: 'stale-read',
      message: `${describe(call)} returned ${isInitial(r) ? 'the initial value' : `the older ${describeValue(r)}`} although ${describe(latest)} was acknowledged before it began (read by ${describe(seenBy)})`,
      ops: [at(call), at(latest), at(seenBy)],
    };
  }
  return {
    anomaly: 'unexplained',
    message: `${describe(call)} cannot be placed in any order of the others`,
    ops: [at(call)],
  };
}

/** A violating key, explained. */
export interface KeyExplanation extends RegisterExplanation {
  /** Absent for a single-register history. */
  readonly key?: string | number | bigint;
}

/**
 * Explains every counterexample of a register result (`kv`: values `[key, v]`; `register` and
 * `cas-register`: one register, values `v`). Other models get no explanation.
 */
export function explainRegisterResult(
  result: LinearizabilityResult,
  ops: readonly Op[],
  initial: unknown = null,
): KeyExplanation[] {
  const single = result.model === 'register' || result.model === 'cas-register';
  if (!single && result.model !== 'kv') return [];
  return (result.counterexamples ?? []).map((ce) => {
    const keyOps = single
      ? ops.filter((op) => op.process !== 'nemesis').map((op) => ({ ...op, value: [null, op.value] }))
      : ops.filter(
          (op) =>
            ce.key !== undefined &&
            Array.isArray(op.value) &&
            op.value.length === 2 &&
            canonicalKey(op.value[0]) === ce.key,
        );
    const explanation = explainRegisterViolation(keyOps, ce.failingOp, initial);
    return ce.key === undefined ? explanation : { key: ce.key, ...explanation };
  });
}

/** `lost-write` → `lost acknowledged write`, for messages. */
export function anomalyWords(anomaly: RegisterAnomaly): string {
  switch (anomaly) {
    case 'never-written':
      return 'read of a never-written value';
    case 'failed-write-read':
      return 'read of a failed write';
    case 'resurrected':
      return 'resurrected value';
    case 'lost-write':
      return 'lost acknowledged write';
    case 'stale-read':
      return 'stale read';
    case 'unexplained':
      return 'not linearizable';
  }
}
