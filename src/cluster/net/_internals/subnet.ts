import { createHash } from 'node:crypto';

const MAX_ATTEMPTS = 256;
/** Routes wider than this (e.g. a 10.0.0.0/8 out of the real interface) are less specific than ours. */
const WIDEST_CONFLICTING_PREFIX = 16;

/** A /24 inside 10.0.0.0/8 for one run: `10.a.b`. */
export interface Subnet24 {
  readonly base: string;
  readonly cidr: string;
}

/**
 * Picks a /24 from a hash of the run id, skipping any that overlaps a route or address the host
 * already has (another run's subnet, a real network), so two runs never collide.
 */
export function chooseSubnet(
  runId: string,
  existingPrefixes: readonly string[],
  preferred?: string,
): Subnet24 {
  const taken = existingPrefixes.map(parsePrefix).filter((p) => p !== undefined);
  const first = preferred !== undefined ? subnetOf(preferred) : undefined;
  for (const subnet of [...(first ? [first] : []), ...candidateSubnets(runId)]) {
    const network = parsePrefix(subnet.cidr)!.network;
    if (taken.some((p) => overlaps(network, 24, p.network, p.length))) continue;
    return subnet;
  }
  throw new Error('no free 10.x.y.0/24 subnet for this run: remove stale routes (`mallory cleanup`)');
}

/** The /24s a run may take, in the order it tries them: a run's subnet is one of these, or the one it was given. */
export function candidateSubnets(runId: string, count = MAX_ATTEMPTS): Subnet24[] {
  const subnets: Subnet24[] = [];
  for (let attempt = 0; attempt < count; attempt++) {
    const digest = createHash('sha256').update(`${runId}/${attempt}`).digest();
    // 10.16.0.0 – 10.239.255.0: away from 10.0.x and 10.255.x, which hosts most often use.
    const a = 16 + (digest[0] % 224);
    const b = digest[1];
    subnets.push({ base: `10.${a}.${b}`, cidr: `10.${a}.${b}.0/24` });
  }
  return subnets;
}

/** The `Subnet24` of a `10.a.b.0/24`, or undefined for anything else. */
function subnetOf(cidr: string): Subnet24 | undefined {
  const m = /^10\.(\d+)\.(\d+)\.0\/24$/.exec(cidr);
  if (!m || Number(m[1]) > 255 || Number(m[2]) > 255) return undefined;
  return { base: `10.${m[1]}.${m[2]}`, cidr };
}

interface Prefix {
  readonly network: number;
  readonly length: number;
}

function parsePrefix(text: string): Prefix | undefined {
  const m = /^(\d+)\.(\d+)\.(\d+)\.(\d+)(?:\/(\d+))?$/.exec(text);
  if (!m) return undefined;
  const length = m[5] === undefined ? 32 : Number(m[5]);
  if (length < WIDEST_CONFLICTING_PREFIX) return undefined;
  const ip = ((Number(m[1]) << 24) | (Number(m[2]) << 16) | (Number(m[3]) << 8) | Number(m[4])) >>> 0;
  return { network: ip, length };
}

function overlaps(a: number, aLen: number, b: number, bLen: number): boolean {
  const len = Math.min(aLen, bLen);
  const mask = len === 0 ? 0 : (0xffffffff << (32 - len)) >>> 0;
  return (a & mask) >>> 0 === (b & mask) >>> 0;
}

/** Every IPv4 prefix in `ip -4 route show table all` / `ip -4 -o addr` output. */
export function prefixesIn(text: string): string[] {
  return [...text.matchAll(/\b(\d+\.\d+\.\d+\.\d+(?:\/\d+)?)\b/g)].map((m) => m[1]);
}
