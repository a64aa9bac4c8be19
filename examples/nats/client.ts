import type { Address, ClientResult, KvClient } from '../../src/index.js';
import { NatsConnection, type RequestOutcome } from './connection.js';
import {
  EXPECTED_LAST_SUBJECT_SEQUENCE,
  keySubject,
  lastValue,
  publishOutcome,
  STREAM_MSG_GET,
  type LastValue,
} from './jetstream.js';

/**
 * A register client on one NATS server, over the KV bucket: read = the key's last message from
 * the stream leader, write = a publish acknowledged by JetStream, cas = a read, then a publish
 * conditional on the key's last sequence being the one read. It keeps one connection and opens a
 * new one when that one broke.
 */
export class NatsKvClient implements KvClient {
  private conn: NatsConnection | undefined;

  constructor(
    private readonly address: Address,
    private readonly timeoutMs: number,
  ) {}

  /** A usable connection within the deadline, or why there is none (nothing was sent). */
  private async connection(deadline: number): Promise<NatsConnection | string> {
    if (this.conn?.usable) return this.conn;
    this.conn?.close();
    this.conn = undefined;
    const opened = await NatsConnection.open(this.address, Math.max(1, deadline - Date.now()));
    if (!(opened instanceof NatsConnection)) return opened.error;
    this.conn = opened;
    return opened;
  }

  private async request(
    subject: string,
    payload: string,
    deadline: number,
    headers?: Readonly<Record<string, string>>,
  ): Promise<RequestOutcome> {
    const conn = await this.connection(deadline);
    if (typeof conn === 'string') return { kind: 'not-sent', error: conn };
    return conn.request(subject, payload, Math.max(1, deadline - Date.now()), headers);
  }

  private async last(key: string, deadline: number): Promise<LastValue> {
    const body = JSON.stringify({ last_by_subj: keySubject(key) });
    return lastValue(await this.request(STREAM_MSG_GET, body, deadline));
  }

  async read(key: string): Promise<ClientResult> {
    const last = await this.last(key, Date.now() + this.timeoutMs);
    // A read changes nothing: any failure is `fail`.
    if (last.kind === 'error') return { type: 'fail', error: last.error };
    return { type: 'ok', value: last.kind === 'found' ? last.value : null };
  }

  async write(key: string, value: number): Promise<ClientResult> {
    const deadline = Date.now() + this.timeoutMs;
    return publishOutcome(await this.request(keySubject(key), String(value), deadline));
  }

  async cas(key: string, expected: number, value: number): Promise<ClientResult> {
    const deadline = Date.now() + this.timeoutMs;
    const last = await this.last(key, deadline);
    if (last.kind === 'error') return { type: 'fail', error: `read before cas: ${last.error}` };
    if (last.kind === 'missing') return { type: 'fail', error: 'key has no value' };
    if (last.value !== expected) return { type: 'fail', error: `value is ${last.value}, not ${expected}` };
    // Stored only if the key's last message is still the one just read (so its value is `expected`).
    const headers = { [EXPECTED_LAST_SUBJECT_SEQUENCE]: String(last.seq) };
    return publishOutcome(await this.request(keySubject(key), String(value), deadline, headers));
  }

  close(): Promise<void> {
    this.conn?.close();
    this.conn = undefined;
    return Promise.resolve();
  }
}
