import { transportResult } from '../../_internals/http.js';
import type { ClientResult } from '../../system.js';
import type { GatewayOutcome } from '../gateway.js';

/**
 * etcd errors that say the request was rejected before it was proposed: the apply queue is full,
 * the caller is not authorised, or the transaction is malformed (checked before it is proposed).
 */
const DEFINITE_ERRORS = [
  /etcdserver: too many requests/,
  /invalid auth token/,
  /permission denied/,
  /etcdserver: duplicate key given in txn request/,
];

/**
 * The client result of a gateway call that did not succeed: `fail` when etcd certainly did not
 * apply it (connection refused, a definite error), else `info`.
 */
export function errorResult(
  outcome: Exclude<GatewayOutcome, { kind: 'ok' }>,
): Exclude<ClientResult, { type: 'ok' }> {
  if (outcome.kind !== 'error') return transportResult(outcome);
  const message = `${outcome.status}: ${outcome.message}`;
  return DEFINITE_ERRORS.some((re) => re.test(outcome.message))
    ? { type: 'fail', error: message }
    : { type: 'info', error: message };
}
