import type { Address } from '../../cluster/net/backend.js';
import type { ClientResult, CounterClient, KvClient, SetClient, SetReadResult } from '../system.js';
import { isRespError, RespConnection, respOnce, type RespOutcome, type RespValue } from './resp.js';

export const MASTER_NAME = 'mymaster';

/** Compare-and-set as one Lua script: atomic on the primary. */
const CAS_SCRIPT =
  "if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('SET', KEYS[1], ARGV[2]) return 1 else return 0 end";

/** Asks sentinels, in order, for the primary's address (the first answer wins). */
export async function askSentinels(
  sentinels: readonly Address[],
  timeoutMs: number,
): Promise<Address | undefined> {
  for (const sentinel of sentinels) {
    const outcome = await respOnce(sentinel, ['SENTINEL', 'get-master-addr-by-name', MASTER_NAME], timeoutMs);
    if (outcome.kind !== 'reply' || !Array.isArray(outcome.value)) continue;
    const [host, port] = outcome.value as RespValue[];
    if (typeof host === 'string' && typeof port === 'string') return { host, port: Number(port) };
  }
  return undefined;
}

/**
 * A register client that follows the sentinels to the primary, the way sentinel-aware clients do:
 * it keeps its connection to the primary until that connection fails or the server says it is not
 * the primary any more, then asks the sentinels again. No offline queue and no automatic resend: an
 * op whose command may have reached the server and got no reply is `info`.
 */
export class RedisClient implements KvClient {
  private conn: RespConnection | undefined;
  /** The node the connection goes to, as `onPrimary` named it. */
  private connectedTo: string | undefined;

  constructor(
    /** The sentinels to ask, this client's own node first. */
    private readonly sentinels: readonly Address[],
    private readonly timeoutMs: number,
    /** Told each primary the client connects to; answers its node's name, if it knows it. */
    private readonly onPrimary: (primary: Address) => string | undefined,
  ) {}

  /** A connection to the node that says it is the primary, or why there is none (nothing was sent). */
  private async primary(deadline: number): Promise<RespConnection | string> {
    if (this.conn?.usable) return this.conn;
    const remaining = (): number => Math.max(1, deadline - Date.now());
    const address = await askSentinels(this.sentinels, remaining());
    if (!address) return 'no sentinel named a primary';
    const conn = await RespConnection.open(address, remaining());
    if (!(conn instanceof RespConnection)) return conn.error;
    const role = await conn.command(['ROLE'], remaining());
    if (role.kind !== 'reply' || !Array.isArray(role.value) || role.value[0] !== 'master') {
      conn.close();
      return `${address.host}:${address.port} is not the primary (${describe(role)})`;
    }
    this.connectedTo = this.onPrimary(address);
    this.conn = conn;
    return conn;
  }

  /**
   * Runs one command on the primary: its reply, or the outcome when there was none or an error
   * reply (the command was not executed). `served` names the node the command went to.
   */
  async run(args: readonly string[]): Promise<(RespOutcome & { served?: string }) | ClientResult> {
    const deadline = Date.now() + this.timeoutMs;
    const conn = await this.primary(deadline);
    if (typeof conn === 'string') return { type: 'fail', error: conn };
    const served = this.connectedTo !== undefined ? { served: this.connectedTo } : {};
    const outcome = await conn.command(args, Math.max(1, deadline - Date.now()));
    if (outcome.kind !== 'reply') {
      this.drop();
      return outcome.kind === 'refused'
        ? { type: 'fail', error: outcome.error, ...served }
        : { type: 'info', error: `${outcome.kind}: ${outcome.error}`, ...served };
    }
    // An error reply (READONLY after a demotion, LOADING, MASTERDOWN …): not executed.
    if (isRespError(outcome.value)) {
      if (/^(READONLY|LOADING|MASTERDOWN)/.test(outcome.value.error)) this.drop();
      return { type: 'fail', error: outcome.value.error, ...served };
    }
    return { ...outcome, ...served };
  }

  private drop(): void {
    this.conn?.close();
    this.conn = undefined;
    this.connectedTo = undefined;
  }

  async read(key: string): Promise<ClientResult> {
    const r = await this.run(['GET', key]);
    if ('type' in r) return r;
    const value = r.kind === 'reply' ? r.value : null;
    return { type: 'ok', value: typeof value === 'string' ? Number(value) : null, ...servedOf(r) };
  }

  async write(key: string, value: number): Promise<ClientResult> {
    const r = await this.run(['SET', key, String(value)]);
    if ('type' in r) return r;
    return r.kind === 'reply' && r.value === 'OK'
      ? { type: 'ok', ...servedOf(r) }
      : { type: 'info', error: `SET replied ${describe(r)}`, ...servedOf(r) };
  }

  async cas(key: string, expected: number, value: number): Promise<ClientResult> {
    const r = await this.run(['EVAL', CAS_SCRIPT, '1', key, String(expected), String(value)]);
    if ('type' in r) return r;
    if (r.kind === 'reply' && r.value === 1) return { type: 'ok', ...servedOf(r) };
    if (r.kind === 'reply' && r.value === 0)
      return { type: 'fail', error: `value is not ${expected}`, ...servedOf(r) };
    return { type: 'info', error: `EVAL replied ${describe(r)}`, ...servedOf(r) };
  }

  close(): Promise<void> {
    this.drop();
    return Promise.resolve();
  }
}

/** `{ served }` when the outcome names the node it came from. */
function servedOf(outcome: { served?: string }): { served?: string } {
  return outcome.served !== undefined ? { served: outcome.served } : {};
}

function describe(outcome: RespOutcome): string {
  return outcome.kind === 'reply' ? JSON.stringify(outcome.value) : `${outcome.kind}: ${outcome.error}`;
}

/** Sets on the primary: SADD and SMEMBERS (elements are integers). */
export class RedisSetClient implements SetClient {
  constructor(private readonly redis: RedisClient) {}

  async add(key: string, element: number): Promise<ClientResult> {
    const r = await this.redis.run(['SADD', key, String(element)]);
    if ('type' in r) return r;
    return r.kind === 'reply' && typeof r.value === 'number'
      ? { type: 'ok' }
      : { type: 'info', error: `SADD replied ${describe(r)}` };
  }

  async read(key: string): Promise<SetReadResult> {
    const r = await this.redis.run(['SMEMBERS', key]);
    if ('type' in r) return r.type === 'ok' ? { type: 'info', error: 'SMEMBERS: no reply' } : r;
    if (r.kind !== 'reply' || !Array.isArray(r.value)) {
      return { type: 'info', error: `SMEMBERS replied ${describe(r)}` };
    }
    return { type: 'ok', value: r.value.map(Number) };
  }

  close(): Promise<void> {
    return this.redis.close();
  }
}

/** Counters on the primary: INCRBY and GET. */
export class RedisCounterClient implements CounterClient {
  constructor(private readonly redis: RedisClient) {}

  async add(key: string, delta: number): Promise<ClientResult> {
    const r = await this.redis.run(['INCRBY', key, String(delta)]);
    if ('type' in r) return r;
    return r.kind === 'reply' && typeof r.value === 'number'
      ? { type: 'ok', value: r.value }
      : { type: 'info', error: `INCRBY replied ${describe(r)}` };
  }

  read(key: string): Promise<ClientResult> {
    return this.redis.read(key);
  }

  close(): Promise<void> {
    return this.redis.close();
  }
}
