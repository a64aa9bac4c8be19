import type { Op, OpType, ProcessId } from '../../core/op.js';
import { exactJson } from '../../core/exact-json.js';
import { isMicroOpList } from './txn-model.js';

const OP_TYPES: readonly string[] = ['invoke', 'ok', 'fail', 'info'] satisfies readonly OpType[];

/** How much of an offending field a message quotes, so it stays one short line. */
const MAX_QUOTED_CHARS = 60;

function quote(value: unknown): string {
  if (value === undefined) return 'nothing';
  const text = typeof value === 'number' && !Number.isFinite(value) ? String(value) : exactJson(value);
  return text.length > MAX_QUOTED_CHARS ? `${text.slice(0, MAX_QUOTED_CHARS - 1)}…` : text;
}

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

/** A time in ns; one beyond 2^53 ns (104 days) is rounded, as times only place ops on a drawing. */
function readTime(time: unknown): number | undefined {
  if (typeof time === 'bigint') return time >= 0n ? Number(time) : undefined;
  return isCount(time) ? time : undefined;
}

/**
 * Builds an Op from fields read from a file, or says what is wrong with them (the caller adds the
 * file and line). `position` stands in for a missing index or time.
 */
export function opFromFields(fields: Readonly<Record<string, unknown>>, position: number): Op | string {
  const { type } = fields;
  // Elle's own example histories write transactions without :f and :process: a transaction, and
  // the ops of one process (each invoke followed by its completion).
  const txn = isMicroOpList(fields.value);
  const f = fields.f ?? (txn ? 'txn' : undefined);
  const process = fields.process ?? (txn ? 0 : undefined);
  if (typeof type !== 'string' || !OP_TYPES.includes(type)) {
    return `type must be one of invoke, ok, fail, info; got ${quote(type)}`;
  }
  if (typeof f !== 'string' || f === '') return `f must be a name such as read or write; got ${quote(f)}`;
  let processId: ProcessId;
  if (isCount(process)) processId = process;
  else if (process === 'nemesis') processId = 'nemesis';
  else {
    return `process must be an integer or "nemesis" (clients are numbered from 0); got ${quote(process)}`;
  }
  const index = fields.index ?? position;
  if (!isCount(index))
    return `index must be an integer >= 0 (the op's place in the history); got ${quote(index)}`;
  const time = readTime(fields.time ?? position);
  if (time === undefined) {
    return `time must be an integer >= 0 (ns since the test started); got ${quote(fields.time)}`;
  }
  const { node, error } = fields;
  if (node !== undefined && node !== null && typeof node !== 'string') {
    return `node must be a name such as "n1"; got ${quote(node)}`;
  }
  return {
    index,
    time,
    type: type as OpType,
    process: processId,
    f,
    // An op with a key of its own (Porcupine's `{:f :get, :key "6", :value nil}`) is one key's op
    // of many, as a Jepsen independent tuple is: its value becomes [key, value].
    value:
      fields.key === undefined || fields.key === null
        ? (fields.value ?? null)
        : [fields.key, fields.value ?? null],
    ...(typeof node === 'string' ? { node } : {}),
    // A final read (JSON `final`, EDN `:final?`): checked as linearizable under sequential reads.
    ...(fields.final === true || fields['final?'] === true ? { final: true as const } : {}),
    ...(typeof error === 'string'
      ? { error }
      : error !== undefined && error !== null
        ? { error: exactJson(error) }
        : {}),
  };
}
