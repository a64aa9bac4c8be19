import { isKvraftBug, KVRAFT_BUGS, type KvraftBug } from '../bugs.js';
import type { HostPort } from '../seams.js';

export interface NodeArgs {
  readonly id: string;
  readonly dataDir: string;
  readonly client: HostPort;
  readonly peer: HostPort;
  /** For each node id, the address this node dials to reach that node's peer service. */
  readonly peers: ReadonlyMap<string, HostPort>;
  readonly members: readonly string[];
  readonly join: boolean;
  readonly bugs: ReadonlySet<KvraftBug>;
  readonly snapshotEvery: number;
  /** Election timeout range; tests pin it to make elections deterministic. */
  readonly electionMinMs: number;
  readonly electionMaxMs: number;
}

export const USAGE =
  'usage: node node.js --id ID --data DIR --client HOST:PORT --peer HOST:PORT ' +
  '--peers ID=HOST:PORT,... --members ID,... [--join] [--bug NAME]... [--snapshot-every N] ' +
  '[--election-ms MIN-MAX]';

export const DEFAULT_SNAPSHOT_EVERY = 64;
export const DEFAULT_ELECTION_MIN_MS = 300;
export const DEFAULT_ELECTION_MAX_MS = 600;

function hostPort(text: string, what: string): HostPort {
  const m = /^(.+):(\d+)$/.exec(text);
  if (!m) throw new Error(`${what} must be HOST:PORT, got "${text}"`);
  return { host: m[1], port: Number(m[2]) };
}

/** Reads the node's command line; throws with a message naming the bad option. */
export function parseNodeArgs(argv: readonly string[]): NodeArgs {
  const values = new Map<string, string>();
  const bugs = new Set<KvraftBug>();
  let join = false;
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    if (flag === '--join') {
      join = true;
      continue;
    }
    const value = argv[i + 1];
    if (!flag.startsWith('--') || value === undefined) throw new Error(`bad argument "${flag}"`);
    i++;
    if (flag === '--bug') {
      if (!isKvraftBug(value)) {
        throw new Error(`unknown bug "${value}": known bugs are ${KVRAFT_BUGS.join(', ')}`);
      }
      bugs.add(value);
    } else values.set(flag.slice(2), value);
  }
  const need = (name: string): string => {
    const v = values.get(name);
    if (v === undefined || v === '') throw new Error(`missing --${name}`);
    return v;
  };
  const peers = new Map<string, HostPort>();
  for (const item of need('peers').split(',')) {
    const eq = item.indexOf('=');
    if (eq <= 0) throw new Error(`--peers items must be ID=HOST:PORT, got "${item}"`);
    peers.set(item.slice(0, eq), hostPort(item.slice(eq + 1), `--peers ${item.slice(0, eq)}`));
  }
  const snapshotEvery = Number(values.get('snapshot-every') ?? DEFAULT_SNAPSHOT_EVERY);
  if (!Number.isInteger(snapshotEvery) || snapshotEvery < 1) {
    throw new Error('--snapshot-every must be a positive integer');
  }
  const election = values.get('election-ms') ?? `${DEFAULT_ELECTION_MIN_MS}-${DEFAULT_ELECTION_MAX_MS}`;
  const range = /^(\d+)-(\d+)$/.exec(election);
  if (!range || Number(range[1]) < 1 || Number(range[1]) > Number(range[2])) {
    throw new Error(`--election-ms must be MIN-MAX in ms with 0 < MIN <= MAX, got "${election}"`);
  }
  return {
    id: need('id'),
    dataDir: need('data'),
    client: hostPort(need('client'), '--client'),
    peer: hostPort(need('peer'), '--peer'),
    peers,
    members: (values.get('members') ?? '').split(',').filter((m) => m.length > 0),
    join,
    bugs,
    snapshotEvery,
    electionMinMs: Number(range[1]),
    electionMaxMs: Number(range[2]),
  };
}
