import type { Address } from '../../cluster/net/backend.js';
import { fromBase64, toBase64 } from '../_internals/base64.js';
import { clientAgent } from '../_internals/http.js';
import type { GuardedTxnClient, MicroOp, TxnGuard, TxnResult } from '../system.js';
import { applyMicroOps } from './_internals/apply-micro-ops.js';
import { errorResult } from './_internals/error-result.js';
import { decodeTxnValue, encodeTxnValue, type TxnValue } from './_internals/txn-value.js';
import { gateway, type GatewayOutcome } from './gateway.js';

interface SnapshotJson {
  header?: { revision?: string };
  responses?: { response_range?: { kvs?: { value?: string; mod_revision?: string }[] } }[];
}

interface CommitJson {
  succeeded?: boolean;
}

/** The keys a transaction touches as one etcd revision saw them. */
interface Snapshot {
  readonly revision: string;
  readonly values: ReadonlyMap<string, TxnValue>;
  /** Each key's mod revision, `'0'` for a key that does not exist. */
  readonly modRevisions: ReadonlyMap<string, string>;
}

/**
 * A `TxnClient` on etcd's v3 JSON gateway, the way Jepsen's etcd tests run transactions: one etcd
 * txn of ranges reads every key the transaction touches at one revision; the micro-ops run here on
 * that snapshot; if any of them writes, a second etcd txn puts the final values only if no key has
 * changed since (its mod revision is the one read). A read-only transaction is the first txn alone
 * (a linearizable read). A guarded transaction (`txnIf`) reads its guard's keys in the same
 * snapshot and goes no further unless they hold what the guard says; the commit's own guard then
 * makes that hold when it applies. Outcomes: the snapshot not read → fail (nothing was written); a
 * guard not met → fail; the commit timed out, lost or refused with an error etcd may still apply →
 * info.
 */
export class EtcdTxnClient implements GuardedTxnClient {
  private readonly agent = clientAgent();

  constructor(
    private readonly address: Address,
    private readonly timeoutMs: number,
  ) {}

  private call(body: unknown, timeoutMs: number): Promise<GatewayOutcome> {
    return gateway(this.address, '/v3/kv/txn', body, timeoutMs, this.agent);
  }

  txn(ops: readonly MicroOp[]): Promise<TxnResult> {
    return this.txnIf([], ops);
  }

  async txnIf(guard: TxnGuard, ops: readonly MicroOp[]): Promise<TxnResult> {
    const deadline = Date.now() + this.timeoutMs;
    const keys = [...new Set([...ops.map((op) => op[1]), ...guard.map(([key]) => key)])];
    const read = await this.call(
      { success: keys.map((key) => ({ requestRange: { key: toBase64(key) } })) },
      this.timeoutMs,
    );
    if (read.kind !== 'ok') return { type: 'fail', error: `snapshot read: ${errorResult(read).error}` };
    const snapshot = readSnapshot(keys, read.json);
    if (typeof snapshot === 'string') return { type: 'fail', error: `snapshot read: ${snapshot}` };
    const unmet = guard.find(([key, value]) => (snapshot.values.get(key) ?? null) !== value);
    if (unmet !== undefined) {
      const [key, value] = unmet;
      return {
        type: 'fail',
        error: `key ${JSON.stringify(key)} holds ${JSON.stringify(snapshot.values.get(key) ?? null)} at revision ${snapshot.revision}, not ${JSON.stringify(value)}: nothing written`,
      };
    }
    const applied = applyMicroOps(snapshot.values, ops);
    if (!applied.ok) return { type: 'fail', error: applied.error };
    if (applied.writes.size === 0) return { type: 'ok', value: applied.results };
    const leftMs = deadline - Date.now();
    if (leftMs <= 0)
      return { type: 'fail', error: `timed out after ${this.timeoutMs} ms, before the commit` };
    const commit = await this.call(
      {
        compare: keys.map((key) => ({
          key: toBase64(key),
          target: 'MOD',
          result: 'EQUAL',
          modRevision: snapshot.modRevisions.get(key),
        })),
        success: [...applied.writes].map(([key, value]) => ({
          requestPut: { key: toBase64(key), value: toBase64(encodeTxnValue(value)) },
        })),
      },
      leftMs,
    );
    if (commit.kind !== 'ok') return errorResult(commit);
    return (commit.json as CommitJson).succeeded === true
      ? { type: 'ok', value: applied.results }
      : { type: 'fail', error: `a key changed after revision ${snapshot.revision}: nothing written` };
  }

  close(): Promise<void> {
    this.agent.destroy();
    return Promise.resolve();
  }
}

/** The snapshot in a reply to a txn of one range per key, or what is wrong with the reply. */
function readSnapshot(keys: readonly string[], json: unknown): Snapshot | string {
  const reply = json as SnapshotJson;
  const responses = reply.responses ?? [];
  if (responses.length !== keys.length) {
    return `${responses.length} range responses for ${keys.length} keys`;
  }
  const values = new Map<string, TxnValue>();
  const modRevisions = new Map<string, string>();
  for (const [i, key] of keys.entries()) {
    const kv = responses[i].response_range?.kvs?.[0];
    modRevisions.set(key, kv?.mod_revision ?? '0');
    if (kv === undefined) continue;
    const text = fromBase64(kv.value ?? '');
    const value = decodeTxnValue(text);
    if (value === undefined)
      return `key ${JSON.stringify(key)} holds ${JSON.stringify(text)}, not a list or a number`;
    values.set(key, value);
  }
  return { revision: reply.header?.revision ?? '?', values, modRevisions };
}
