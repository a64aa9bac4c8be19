import type { Address } from '../../cluster/net/backend.js';
import { clientAgent, httpCall, transportResult } from '../_internals/http.js';
import type { GuardedTxnClient, MicroOp, TxnGuard, TxnResult } from '../system.js';

/**
 * The part of the client's timeout the app may spend on a transaction: what is left is for the
 * reply to arrive, so that the app's own verdict (fail or info) reaches the client before it gives
 * up and has to call the transaction `info`.
 */
const SERVER_SHARE = 0.8;
const MIN_SERVER_TIMEOUT_MS = 100;
const ERROR_EXCERPT_CHARS = 300;

/**
 * Transactions through our dqlite app's POST /txn: one SQL transaction (BEGIN … COMMIT) per call.
 * The app classifies its errors (see `runTxn` in the app's source): `fail` only when nothing can
 * have been committed (BEGIN failed; a statement failed and the ROLLBACK succeeded or nothing had
 * been written), `info` when something may have been (COMMIT failed or timed out). Here a refused
 * connection is `fail`; a timeout, a lost connection or a reply that is not the app's JSON is `info`.
 * A guarded transaction (`txnIf`) reads its guard's keys inside the same SQL transaction first, and
 * the app refuses it (`fail`, nothing written) when one does not hold its value.
 */
export class DqliteTxnClient implements GuardedTxnClient {
  private readonly agent = clientAgent();

  constructor(
    private readonly address: Address,
    private readonly timeoutMs: number,
  ) {}

  txn(ops: readonly MicroOp[]): Promise<TxnResult> {
    return this.post(ops, undefined);
  }

  txnIf(guard: TxnGuard, ops: readonly MicroOp[]): Promise<TxnResult> {
    return this.post(ops, guard);
  }

  private async post(ops: readonly MicroOp[], guard: TxnGuard | undefined): Promise<TxnResult> {
    const serverTimeoutMs = Math.max(MIN_SERVER_TIMEOUT_MS, Math.floor(this.timeoutMs * SERVER_SHARE));
    const outcome = await httpCall({
      address: this.address,
      method: 'POST',
      path: '/txn',
      body: JSON.stringify({ ops, ...(guard === undefined ? {} : { guard }), timeoutMs: serverTimeoutMs }),
      timeoutMs: this.timeoutMs,
      agent: this.agent,
    });
    if (outcome.kind !== 'response') return transportResult(outcome);
    return parseReply(ops, outcome.status, outcome.body);
  }

  close(): Promise<void> {
    this.agent.destroy();
    return Promise.resolve();
  }
}

/** The app's reply as a result; anything else the request may have caused is `info`. */
export function parseReply(ops: readonly MicroOp[], status: number, body: string): TxnResult {
  const unexpected = (why: string): TxnResult => ({
    type: 'info',
    error: `${why}: HTTP ${status} ${JSON.stringify(body.slice(0, ERROR_EXCERPT_CHARS))}`,
  });
  let reply: unknown;
  try {
    reply = JSON.parse(body);
  } catch {
    return unexpected('a reply that is not JSON');
  }
  if (status !== 200 || typeof reply !== 'object' || reply === null) return unexpected('an unexpected reply');
  const { type, error, value } = reply as { type?: unknown; error?: unknown; value?: unknown };
  if ((type === 'fail' || type === 'info') && typeof error === 'string') return { type, error };
  if (type !== 'ok') return unexpected('an unexpected reply');
  const completed = completedOps(ops, value);
  return completed
    ? { type: 'ok', value: completed }
    : unexpected('a transaction answered with other micro-ops');
}

/** The requested micro-ops with the reads filled in from `value`, if `value` answers exactly them. */
function completedOps(ops: readonly MicroOp[], value: unknown): MicroOp[] | undefined {
  if (!Array.isArray(value) || value.length !== ops.length) return undefined;
  const completed: MicroOp[] = [];
  for (const [i, op] of ops.entries()) {
    const answer: unknown = value[i];
    if (!Array.isArray(answer) || answer.length !== 3 || answer[0] !== op[0] || answer[1] !== op[1])
      return undefined;
    const read: unknown = answer[2];
    if (op[0] !== 'r') {
      if (read !== op[2]) return undefined;
      completed.push(op);
    } else if (read === null || Number.isInteger(read)) {
      completed.push(['r', op[1], read as number | null]);
    } else if (Array.isArray(read) && read.every((e) => Number.isInteger(e))) {
      completed.push(['r', op[1], read as number[]]);
    } else return undefined;
  }
  return completed;
}
