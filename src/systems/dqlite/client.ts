import type { Address } from '../../cluster/net/backend.js';
import { clientAgent, httpCall, transportResult } from '../_internals/http.js';
import type { ClientResult, KvClient } from '../system.js';

const NO_ROWS = /sql: no rows in result set/;
const CAS_MISMATCH = /cas mismatch/;
/**
 * Errors after which our app's write certainly did not commit: `not started` (its BEGIN failed),
 * or the write lock refused inside its transaction (rolled back, never run again).
 */
const DEFINITE_WRITE_ERRORS = [/database is locked/, /^Error: not started:/];

function keyPath(key: string): string {
  return `/${encodeURIComponent(key)}`;
}

/** A read's reply: a value, no row (`null`), or an error (a read changes nothing: fail). */
export function readReply(status: number, text: string): ClientResult {
  const body = text.trim();
  if (NO_ROWS.test(body)) return { type: 'ok', value: null };
  if (status !== 200 || body.startsWith('Error')) return { type: 'fail', error: body.slice(0, 200) };
  const value = Number(body);
  return Number.isFinite(value) && body !== ''
    ? { type: 'ok', value }
    : { type: 'fail', error: `unexpected reply ${JSON.stringify(body.slice(0, 100))}` };
}

/**
 * A write's (or cas's) reply: ok only on `done`; fail only when nothing of it can have committed
 * (in our app: BEGIN failed, the database was locked, a cas found another value) — a wrong fail
 * makes the checker see a lost or resurrected value that never was; info otherwise (COMMIT's answer
 * lost, a statement cut short). dqlite-demo (`inTxn` false) runs a plain Exec, which database/sql
 * runs again when go-dqlite reports a lost leader as a bad connection, even when the first run
 * committed: the second run's error ("database is locked") says nothing of the first, so no error
 * of dqlite-demo is a definite fail.
 */
export function writeReply(status: number, text: string, mismatchError?: string, inTxn = true): ClientResult {
  const body = text.trim();
  if (status === 200 && body === 'done') return { type: 'ok' };
  if (mismatchError !== undefined && CAS_MISMATCH.test(body)) return { type: 'fail', error: mismatchError };
  const error = body.slice(0, 200);
  return inTxn && DEFINITE_WRITE_ERRORS.some((re) => re.test(body))
    ? { type: 'fail', error }
    : { type: 'info', error };
}

/** Reads and writes through dqlite-demo's HTTP API (GET/PUT /KEY), and cas through our app's POST. */
export class DqliteClient implements KvClient {
  private readonly agent = clientAgent();

  constructor(
    private readonly address: Address,
    private readonly timeoutMs: number,
    /** Our app (cas, writes in a transaction), not dqlite-demo. */
    private readonly withCas = false,
  ) {}

  async read(key: string): Promise<ClientResult> {
    const outcome = await httpCall({
      address: this.address,
      method: 'GET',
      path: keyPath(key),
      timeoutMs: this.timeoutMs,
      agent: this.agent,
    });
    if (outcome.kind !== 'response') return transportResult(outcome);
    return readReply(outcome.status, outcome.body);
  }

  async write(key: string, value: number): Promise<ClientResult> {
    return this.send('PUT', keyPath(key), value);
  }

  /** Our app's POST /KEY?cas=OLD; dqlite-demo has no cas (its adapter says `supportsCas: false`). */
  async cas(key: string, expected: number, value: number): Promise<ClientResult> {
    if (!this.withCas) return { type: 'fail', error: 'dqlite-demo has no compare-and-set' };
    return this.send(
      'POST',
      `${keyPath(key)}?cas=${encodeURIComponent(String(expected))}`,
      value,
      `value is not ${expected}`,
    );
  }

  /** Sends `value` as the body; `mismatchError` is the failure a cas mismatch reply means. */
  private async send(
    method: 'PUT' | 'POST',
    path: string,
    value: number,
    mismatchError?: string,
  ): Promise<ClientResult> {
    const outcome = await httpCall({
      address: this.address,
      method,
      path,
      body: String(value),
      contentType: 'text/plain',
      timeoutMs: this.timeoutMs,
      agent: this.agent,
    });
    if (outcome.kind !== 'response') return transportResult(outcome);
    return writeReply(outcome.status, outcome.body, mismatchError, this.withCas);
  }

  close(): Promise<void> {
    this.agent.destroy();
    return Promise.resolve();
  }
}
