import type { Agent } from 'node:http';

import type { Address } from '../../cluster/net/backend.js';
import { httpCall, type HttpOutcome } from '../_internals/http.js';

/** Quotes bare integers too large for a double (uint64 member ids), so JSON.parse keeps them exact. */
export function parseJsonWithBigIds(text: string): unknown {
  return JSON.parse(text.replace(/:\s*(\d{16,})(?=[,}\]\s])/g, ':"$1"'));
}

export type GatewayOutcome =
  | { readonly kind: 'ok'; readonly json: unknown }
  | { readonly kind: 'error'; readonly status: number; readonly message: string }
  | Exclude<HttpOutcome, { kind: 'response' }>;

/** One POST to etcd's v3 JSON gateway. */
export async function gateway(
  address: Address,
  path: string,
  body: unknown,
  timeoutMs: number,
  agent?: Agent,
): Promise<GatewayOutcome> {
  const outcome = await httpCall({
    address,
    method: 'POST',
    path,
    body: JSON.stringify(body),
    timeoutMs,
    ...(agent ? { agent } : {}),
  });
  if (outcome.kind !== 'response') return outcome;
  let json: unknown;
  try {
    json = parseJsonWithBigIds(outcome.body);
  } catch {
    return { kind: 'error', status: outcome.status, message: outcome.body.slice(0, 200) };
  }
  if (outcome.status !== 200) {
    const message =
      typeof json === 'object' && json !== null && 'error' in json
        ? String(json.error)
        : outcome.body.slice(0, 200);
    return { kind: 'error', status: outcome.status, message };
  }
  return { kind: 'ok', json };
}

export interface EtcdMember {
  readonly id: bigint;
  readonly name: string;
  readonly peerUrls: readonly string[];
}

interface MemberListJson {
  members?: { ID?: string; name?: string; peerURLs?: string[] }[];
}

export function readMembers(json: unknown): EtcdMember[] {
  const list = (json as MemberListJson).members ?? [];
  return list.map((m) => ({ id: BigInt(m.ID ?? '0'), name: m.name ?? '', peerUrls: m.peerURLs ?? [] }));
}

interface StatusJson {
  header?: { member_id?: string };
  leader?: string;
  raftTerm?: string;
}

export function readStatus(json: unknown): { memberId: bigint; leader: bigint } {
  const s = json as StatusJson;
  return { memberId: BigInt(s.header?.member_id ?? '0'), leader: BigInt(s.leader ?? '0') };
}
