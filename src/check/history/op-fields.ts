import type { Op, OpType, ProcessId } from '../../core/op.js';

const OP_TYPES: readonly string[] = ['invoke', 'ok', 'fail', 'info'] satisfies readonly OpType[];

/**
 * Builds an Op from fields read from a file, or says what is wrong with them (the caller adds the
 * file and line). `position` stands in for a missing index or time.
 */
export function opFromFields(fields: Readonly<Record<string, unknown>>, position: number): Op | string {
  const { type, f, process } = fields;
  if (typeof type !== 'string' || !OP_TYPES.includes(type)) {
    return `type must be one of invoke, ok, fail, info; got ${JSON.stringify(type) ?? 'nothing'}`;
  }
  if (typeof f !== 'string')
    return `f must be a name such as read or write; got ${JSON.stringify(f) ?? 'nothing'}`;
  let processId: ProcessId;
  if (typeof process === 'number' && Number.isInteger(process)) processId = process;
  else if (process === 'nemesis') processId = 'nemesis';
  else return `process must be an integer or "nemesis"; got ${JSON.stringify(process) ?? 'nothing'}`;
  const index = fields.index ?? position;
  const time = fields.time ?? position;
  if (typeof index !== 'number') return `index must be a number; got ${JSON.stringify(index)}`;
  if (typeof time !== 'number') return `time must be a number (ns); got ${JSON.stringify(time)}`;
  const op: Op = { index, time, type: type as OpType, process: processId, f, value: fields.value ?? null };
  const { node, error } = fields;
  return {
    ...op,
    ...(typeof node === 'string' ? { node } : {}),
    ...(typeof error === 'string'
      ? { error }
      : error !== undefined && error !== null
        ? { error: JSON.stringify(error) }
        : {}),
  };
}
