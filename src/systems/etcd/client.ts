import type { Address } from '../../cluster/net/backend.js';
import { clientAgent } from '../_internals/http.js';
import { fromBase64, toBase64 } from '../_internals/base64.js';
import type { ClientResult, KvClient } from '../system.js';
import { errorResult } from './_internals/error-result.js';
import { gateway, type GatewayOutcome } from './gateway.js';

interface RangeJson {
  kvs?: { value?: string }[];
}

interface TxnJson {
  succeeded?: boolean;
}

function parseValue(text: string): number | null {
  const n = Number(text);
  return Number.isFinite(n) ? n : null;
}

/** A register client on etcd's v3 JSON gateway (linearizable reads; cas is a txn comparing the value). */
export class EtcdClient implements KvClient {
  private readonly agent = clientAgent();

  constructor(
    private readonly address: Address,
    private readonly timeoutMs: number,
  ) {}

  private call(path: string, body: unknown): Promise<GatewayOutcome> {
    return gateway(this.address, path, body, this.timeoutMs, this.agent);
  }

  async read(key: string): Promise<ClientResult> {
    const outcome = await this.call('/v3/kv/range', { key: toBase64(key) });
    if (outcome.kind !== 'ok') return errorResult(outcome);
    const value = (outcome.json as RangeJson).kvs?.[0]?.value;
    return { type: 'ok', value: value === undefined ? null : parseValue(fromBase64(value)) };
  }

  async write(key: string, value: number): Promise<ClientResult> {
    const outcome = await this.call('/v3/kv/put', { key: toBase64(key), value: toBase64(String(value)) });
    return outcome.kind === 'ok' ? { type: 'ok' } : errorResult(outcome);
  }

  async cas(key: string, expected: number, value: number): Promise<ClientResult> {
    const k = toBase64(key);
    const outcome = await this.call('/v3/kv/txn', {
      compare: [{ key: k, target: 'VALUE', result: 'EQUAL', value: toBase64(String(expected)) }],
      success: [{ requestPut: { key: k, value: toBase64(String(value)) } }],
    });
    if (outcome.kind !== 'ok') return errorResult(outcome);
    return (outcome.json as TxnJson).succeeded === true
      ? { type: 'ok' }
      : { type: 'fail', error: `value is not ${expected}` };
  }

  close(): Promise<void> {
    this.agent.destroy();
    return Promise.resolve();
  }
}
