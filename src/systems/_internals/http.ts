import { Agent, request } from 'node:http';

import type { Address } from '../../cluster/net/backend.js';
import type { ClientResult } from '../system.js';

/**
 * The outcome of one HTTP call, never thrown: a response, a connection refused (the request was
 * certainly not delivered), a timeout, or a connection lost after the request may have been sent.
 */
export type HttpOutcome =
  | { readonly kind: 'response'; readonly status: number; readonly body: string }
  | { readonly kind: 'refused'; readonly error: string }
  | { readonly kind: 'timeout'; readonly error: string }
  | { readonly kind: 'lost'; readonly error: string };

export interface HttpCall {
  readonly address: Address;
  readonly method: 'GET' | 'PUT' | 'POST' | 'DELETE';
  readonly path: string;
  readonly body?: string;
  readonly timeoutMs: number;
  readonly agent?: Agent;
  readonly contentType?: string;
}

/** Errors that mean the request never reached the server. */
const NOT_DELIVERED = new Set(['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'EADDRNOTAVAIL']);

export function httpCall(call: HttpCall): Promise<HttpOutcome> {
  return new Promise((resolve) => {
    let settled = false;
    const settle = (outcome: HttpOutcome): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(outcome);
    };
    const req = request(
      {
        host: call.address.host,
        port: call.address.port,
        method: call.method,
        path: call.path,
        agent: call.agent ?? false,
        headers:
          call.body === undefined
            ? {}
            : {
                'content-type': call.contentType ?? 'application/json',
                'content-length': Buffer.byteLength(call.body),
              },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          settle({
            kind: 'response',
            status: res.statusCode ?? 0,
            body: Buffer.concat(chunks).toString('utf8'),
          });
        });
        res.on('error', (e) => {
          settle({ kind: 'lost', error: e.message });
        });
      },
    );
    const timer = setTimeout(() => {
      settle({ kind: 'timeout', error: `timed out after ${call.timeoutMs} ms` });
      req.destroy();
    }, call.timeoutMs);
    req.on('error', (e: NodeJS.ErrnoException) => {
      settle(
        NOT_DELIVERED.has(e.code ?? '')
          ? { kind: 'refused', error: e.message }
          : { kind: 'lost', error: e.message },
      );
    });
    req.end(call.body);
  });
}

/** The client result for an HTTP outcome that is not a response. */
export function transportResult(
  outcome: Exclude<HttpOutcome, { kind: 'response' }>,
): Exclude<ClientResult, { type: 'ok' }> {
  return outcome.kind === 'refused'
    ? { type: 'fail', error: `refused: ${outcome.error}` }
    : { type: 'info', error: `${outcome.kind}: ${outcome.error}` };
}

/** A keep-alive agent for one client (connections are reused between calls). */
export function clientAgent(): Agent {
  return new Agent({ keepAlive: true, maxSockets: 4 });
}
