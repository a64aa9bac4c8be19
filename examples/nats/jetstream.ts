/**
 * The JetStream key-value bucket the register workload uses, and what JetStream's API answers
 * mean for an operation's outcome. A KV bucket is a stream named `KV_<bucket>` over the subjects
 * `$KV.<bucket>.>`: a put publishes on `$KV.<bucket>.<key>`, and the key's value is that subject's
 * last message.
 * https://github.com/nats-io/nats-architecture-and-design/blob/main/adr/ADR-8.md (the KV design)
 */
import type { ClientResult } from '../../src/index.js';
import type { RequestOutcome } from './connection.js';
import { parseHeaders } from './protocol.js';

export const BUCKET = 'mallory';
export const STREAM = `KV_${BUCKET}`;
export const KV_PREFIX = `$KV.${BUCKET}.`;
export const STREAM_CREATE = `$JS.API.STREAM.CREATE.${STREAM}`;
export const STREAM_INFO = `$JS.API.STREAM.INFO.${STREAM}`;
/** Answered by the stream's leader only (`allow_direct` is off): see the README on consistency. */
export const STREAM_MSG_GET = `$JS.API.STREAM.MSG.GET.${STREAM}`;
/** The conditional-write header: the publish is stored only if the subject's last sequence is this. */
export const EXPECTED_LAST_SUBJECT_SEQUENCE = 'Nats-Expected-Last-Subject-Sequence';

/** JetStream API error codes (`err_code`) this client tells apart. */
export const JS_ERR = {
  noMessageFound: 10037,
  streamNameInUse: 10058,
  streamNotFound: 10059,
  wrongLastSequence: 10071,
} as const;

const NANOS_PER_SECOND = 1_000_000_000;
const DUPLICATE_WINDOW_S = 120;
/** Subject tokens may not hold `.`, `*`, `>` or whitespace: anything but these is written `=XX`. */
const SAFE_KEY = /[^A-Za-z0-9_-]/g;

/** The subject a key's values are published on. */
export function keySubject(key: string): string {
  if (key === '') throw new Error('nats example: a key must not be empty');
  const token = key.replace(SAFE_KEY, (c) => `=${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
  return `${KV_PREFIX}${token}`;
}

/**
 * The stream configuration a KV client creates for a bucket with history 1 (ADR-8), replicated
 * on `replicas` servers. Direct gets are off, so every read goes to the stream's leader.
 */
export function bucketConfig(replicas: number): Record<string, unknown> {
  return {
    name: STREAM,
    subjects: [`${KV_PREFIX}>`],
    retention: 'limits',
    storage: 'file',
    num_replicas: replicas,
    max_msgs_per_subject: 1,
    max_msgs: -1,
    max_bytes: -1,
    max_age: 0,
    max_msg_size: -1,
    max_consumers: -1,
    discard: 'new',
    duplicate_window: DUPLICATE_WINDOW_S * NANOS_PER_SECOND,
    allow_rollup_hdrs: true,
    deny_delete: true,
    deny_purge: false,
    allow_direct: false,
  };
}

/** A JetStream API error object. */
export interface JsError {
  readonly code: number;
  readonly err_code: number;
  readonly description: string;
}

/** The JSON body of an API reply, or why there is none. */
export function apiReply(
  outcome: RequestOutcome,
): { readonly json: Record<string, unknown>; readonly error?: JsError } | { readonly failed: string } {
  if (outcome.kind === 'no-responders') return { failed: 'no responders (no JetStream server answered)' };
  if (outcome.kind !== 'reply') return { failed: `${outcome.kind}: ${outcome.error}` };
  let json: unknown;
  try {
    json = JSON.parse(outcome.payload.toString('utf8'));
  } catch {
    return { failed: `not JSON: ${outcome.payload.toString('utf8').slice(0, 80)}` };
  }
  if (typeof json !== 'object' || json === null) return { failed: 'reply is not a JSON object' };
  const record = json as Record<string, unknown>;
  const error = record.error as JsError | undefined;
  return error === undefined ? { json: record } : { json: record, error };
}

function describeError(error: JsError): string {
  return `${error.description} (err_code ${error.err_code})`;
}

/** A key's last message, as a read through the stream leader gives it. */
export type LastValue =
  | { readonly kind: 'found'; readonly value: number; readonly seq: number }
  | { readonly kind: 'missing' }
  | { readonly kind: 'error'; readonly error: string };

/** Reads a `STREAM.MSG.GET {last_by_subj}` reply. */
export function lastValue(outcome: RequestOutcome): LastValue {
  const reply = apiReply(outcome);
  if ('failed' in reply) return { kind: 'error', error: reply.failed };
  if (reply.error) {
    return reply.error.err_code === JS_ERR.noMessageFound
      ? { kind: 'missing' }
      : { kind: 'error', error: describeError(reply.error) };
  }
  const message = reply.json.message as
    { readonly seq?: unknown; readonly data?: unknown; readonly hdrs?: unknown } | undefined;
  if (message === undefined || typeof message.seq !== 'number') {
    return { kind: 'error', error: 'MSG.GET reply without a message sequence' };
  }
  if (typeof message.hdrs === 'string') {
    // A KV delete or purge marker (we never write one, but a key's last message could be one).
    const operation = parseHeaders(Buffer.from(message.hdrs, 'base64')).fields.get('KV-Operation');
    if (operation !== undefined) return { kind: 'missing' };
  }
  const text = typeof message.data === 'string' ? Buffer.from(message.data, 'base64').toString('utf8') : '';
  if (!/^-?\d+$/.test(text)) return { kind: 'error', error: `value is not an integer: ${text.slice(0, 40)}` };
  return { kind: 'found', value: Number(text), seq: message.seq };
}

/**
 * The outcome of a publish to the bucket. `ok` needs the stream's PubAck (stored, replicated to a
 * quorum). `fail` only when it certainly was not stored: nobody had interest in the subject (503),
 * nothing was sent, or the leader refused a conditional write (wrong last sequence). Anything
 * else, including every other JetStream error, may have been stored: `info`.
 */
export function publishOutcome(outcome: RequestOutcome): ClientResult {
  if (outcome.kind === 'no-responders' || outcome.kind === 'not-sent') {
    return { type: 'fail', error: outcome.kind === 'not-sent' ? outcome.error : 'no responders' };
  }
  const reply = apiReply(outcome);
  if ('failed' in reply) return { type: 'info', error: reply.failed };
  if (reply.error) {
    return reply.error.err_code === JS_ERR.wrongLastSequence
      ? { type: 'fail', error: describeError(reply.error) }
      : { type: 'info', error: describeError(reply.error) };
  }
  if (reply.json.stream === STREAM && typeof reply.json.seq === 'number') return { type: 'ok' };
  return { type: 'info', error: `unexpected PubAck: ${JSON.stringify(reply.json).slice(0, 80)}` };
}

/** The stream leader a `STREAM.INFO` reply names, if any. */
export function streamLeader(outcome: RequestOutcome): string | undefined {
  const reply = apiReply(outcome);
  if ('failed' in reply || reply.error) return undefined;
  const cluster = reply.json.cluster as { readonly leader?: unknown } | undefined;
  return typeof cluster?.leader === 'string' && cluster.leader !== '' ? cluster.leader : undefined;
}
