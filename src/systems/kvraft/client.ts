import type { Address } from '../../cluster/net/backend.js';
import type {
  ClientResult,
  CounterClient,
  GuardedTxnClient,
  KvClient,
  MicroOp,
  TxnGuard,
  TxnResult,
} from '../system.js';
import { type ClientIo, Connection, type NoResponse } from './_internals/connection.js';
import type { ClientResponse } from './_internals/messages.js';

/**
 * A `KvClient`, `TxnClient` and `CounterClient` (`add`, reads as the register's) for kvraft. Calls go to `node`; a "not leader" refusal naming a leader is followed
 * once. Outcomes: a response → ok / fail; a request never sent → fail; a timeout or a connection
 * lost after sending → info (it may have taken effect).
 */
export class KvraftClient implements KvClient, GuardedTxnClient, CounterClient {
  private readonly connections = new Map<string, Connection>();

  constructor(
    private readonly node: string,
    private readonly addresses: ReadonlyMap<string, Address>,
    private readonly timeoutMs: number,
    private readonly io: ClientIo,
  ) {
    if (!addresses.has(node)) throw new Error(`kvraft client: no client address for node ${node}`);
  }

  read(key: string): Promise<ClientResult> {
    return this.call({ op: 'read', key });
  }

  write(key: string, value: number): Promise<ClientResult> {
    return this.call({ op: 'write', key, value });
  }

  cas(key: string, expected: number, value: number): Promise<ClientResult> {
    return this.call({ op: 'cas', key, expected, value });
  }

  /** An atomic add, one log entry; `ok` carries the count it reached. */
  add(key: string, delta: number): Promise<ClientResult> {
    return this.call({ op: 'add', key, delta });
  }

  txn(ops: readonly MicroOp[]): Promise<TxnResult> {
    return this.transact({ op: 'txn', ops });
  }

  /** A transaction applied only if its guard holds when its log entry applies (`fail` if not). */
  txnIf(guard: TxnGuard, ops: readonly MicroOp[]): Promise<TxnResult> {
    return this.transact({ op: 'txn', ops, guard });
  }

  private async transact(body: Record<string, unknown>): Promise<TxnResult> {
    const response = await this.request(body);
    if ('ok' in response && response.ok && 'txn' in response) return { type: 'ok', value: response.txn };
    const result = toResult(response);
    return result.type === 'ok'
      ? { type: 'info', error: 'a transaction answered without its results' }
      : result;
  }

  close(): Promise<void> {
    for (const connection of this.connections.values()) connection.close();
    this.connections.clear();
    return Promise.resolve();
  }

  private async call(body: Record<string, unknown>): Promise<ClientResult> {
    return toResult(await this.request(body));
  }

  private async request(body: Record<string, unknown>): Promise<ClientResponse | NoResponse> {
    const deadline = this.io.env.wallMs() + this.timeoutMs;
    let response = await this.connection(this.node).request(body, this.timeoutMs);
    if ('ok' in response && !response.ok && response.leader !== undefined) {
      const leader = response.leader;
      const left = deadline - this.io.env.wallMs();
      if (leader !== this.node && this.addresses.has(leader) && left > 0) {
        response = await this.connection(leader).request(body, left);
      }
    }
    return response;
  }

  private connection(node: string): Connection {
    let connection = this.connections.get(node);
    if (!connection) {
      connection = new Connection(this.addresses.get(node)!, this.io);
      this.connections.set(node, connection);
    }
    return connection;
  }
}

export function toResult(response: ClientResponse | NoResponse): ClientResult {
  if ('kind' in response) {
    return response.kind === 'unsent'
      ? { type: 'fail', error: response.error }
      : { type: 'info', error: response.error };
  }
  if (response.ok) {
    return 'value' in response && response.value !== undefined
      ? { type: 'ok', value: response.value }
      : { type: 'ok' };
  }
  return response.definite
    ? { type: 'fail', error: response.error }
    : { type: 'info', error: response.error };
}
