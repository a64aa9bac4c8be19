/**
 * Mallory adapter for NATS JetStream (Debian bookworm's nats-server 2.9): a cluster of servers
 * joined by routes, JetStream on every one, and a register workload over a key-value bucket
 * replicated on three of them. Loaded only by path:
 *
 *   mallory run --system examples/nats --time 60s
 *
 * See README.md for what it checks and what NATS promises. In your own project, import from
 * 'mallory' instead of the relative path.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import {
  type LeaderCapability,
  checkBinary,
  type Address,
  type ClusterView,
  type DoctorFinding,
  type KvClient,
  type LaunchSpec,
  type ParsedLogEvent,
  type SystemAdapter,
  type SystemDefinition,
} from '../../src/index.js';
import { NatsKvClient } from './client.js';
import { NatsConnection } from './connection.js';
import {
  apiReply,
  bucketConfig,
  JS_ERR,
  keySubject,
  lastValue,
  streamLeader,
  STREAM_CREATE,
  STREAM_INFO,
  STREAM_MSG_GET,
} from './jetstream.js';
import { NATS_CRASH_PATTERNS, parseNatsLog } from './log.js';

export const NATS_PORTS = { client: 4222, cluster: 6222 } as const;
const CLUSTER_NAME = 'mallory';
/** A KV bucket's usual replication; fewer when the cluster is smaller. */
const BUCKET_REPLICAS = 3;
const ADMIN_TIMEOUT_MS = 1_000;
const LEADER_TIMEOUT_MS = 500;
const READY_KEY = '__mallory_ready__';
/**
 * Route (and client) keepalive: a PING every second and a link declared stale after two missed
 * PONGs, so a cut route is noticed in about 3 s instead of the default 2 minutes × 2. JetStream's
 * own Raft timers (heartbeat 1 s, election 4–9 s in 2.9) are compiled in and cannot be shortened.
 */
const PING_INTERVAL = '1s';
const PING_MAX = 2;
/** A write to a paused peer blocks the route; give up on it after this long (default 10 s). */
const WRITE_DEADLINE = '2s';
const MAX_MEMORY_STORE = '64MB';
const MAX_FILE_STORE = '512MB';

function hostPort(address: Address): string {
  return `${address.host}:${address.port}`;
}

/** The node's nats-server configuration (NATS's own config syntax, a superset of JSON). */
export function serverConfig(node: string, cluster: ClusterView): string {
  const routes = cluster.nodes
    .filter((peer) => peer !== node)
    .map((peer) => JSON.stringify(`nats-route://${hostPort(cluster.dial(node, peer, 'cluster'))}`));
  return [
    `server_name: ${JSON.stringify(node)}`,
    `listen: ${JSON.stringify(hostPort(cluster.listen(node, 'client')))}`,
    `ping_interval: ${JSON.stringify(PING_INTERVAL)}`,
    `ping_max: ${PING_MAX}`,
    `write_deadline: ${JSON.stringify(WRITE_DEADLINE)}`,
    // Debug lines carry JetStream's Raft events (votes, stepping down, catch-up): more for the
    // policy to tell states apart.
    'debug: true',
    'jetstream {',
    // nats-server keeps its files under <store_dir>/jetstream.
    `  store_dir: ${JSON.stringify(cluster.dataDir(node))}`,
    `  max_memory_store: ${MAX_MEMORY_STORE}`,
    `  max_file_store: ${MAX_FILE_STORE}`,
    '}',
    'cluster {',
    `  name: ${CLUSTER_NAME}`,
    `  listen: ${JSON.stringify(hostPort(cluster.listen(node, 'cluster')))}`,
    `  routes: [${routes.join(', ')}]`,
    '}',
    '',
  ].join('\n');
}

class NatsAdapter implements SystemAdapter {
  readonly name = 'nats';
  readonly services = ['client', 'cluster'] as const;
  /** Servers talk to each other over routes only; clients reach any server. */
  readonly peerServices = ['cluster'] as const;
  readonly ports = NATS_PORTS;
  readonly leadership: LeaderCapability = { leader: (cluster) => this.currentLeader(cluster) };
  // No `membership`: JetStream has `$JS.API.SERVER.REMOVE` (peer removal), but no add: a removed
  // server comes back by starting it, and then only under a new name. Not the clean remove/add
  // Mallory drives.
  readonly crashPatterns = NATS_CRASH_PATTERNS;
  constructor(
    /** Whether `cas` is a conditional publish (see README: NATS 2.9 does not serialize them). */
    readonly supportsCas: boolean,
  ) {}

  /** One connection per node for `ready` and `leader`, kept while it works (they are polled often). */
  private readonly admin = new Map<string, NatsConnection>();

  /** Runs `use` on the node's admin connection; undefined when the node cannot be reached. */
  private async withAdmin<T>(
    node: string,
    cluster: ClusterView,
    use: (conn: NatsConnection) => Promise<T>,
  ): Promise<T | undefined> {
    let conn = this.admin.get(node);
    if (!conn?.usable) {
      conn?.close();
      this.admin.delete(node);
      const opened = await NatsConnection.open(cluster.clientAddress(node, 'client'), ADMIN_TIMEOUT_MS);
      if (!(opened instanceof NatsConnection)) return undefined;
      // Another call may have opened one meanwhile: keep one.
      const other = this.admin.get(node);
      if (other?.usable) {
        opened.close();
        conn = other;
      } else {
        this.admin.set(node, opened);
        conn = opened;
      }
    }
    return use(conn);
  }

  doctor(): Promise<readonly DoctorFinding[]> {
    return Promise.all([checkBinary('nats-server', ['--version'], 'nats-server', 'nats-server')]);
  }

  launch(node: string, cluster: ClusterView): LaunchSpec {
    const dir = cluster.dataDir(node);
    mkdirSync(dir, { recursive: true });
    // Written at every launch: the data dir may have been wiped since the last one.
    const config = join(dir, 'nats.conf');
    writeFileSync(config, serverConfig(node, cluster));
    return { command: 'nats-server', args: ['--config', config], env: { GOMAXPROCS: '1' } };
  }

  /**
   * Serving = the bucket exists (created here when it does not: at the start, and after a hard
   * reset wiped every server) and every member answers a read of it through the stream leader.
   */
  async ready(cluster: ClusterView, signal: AbortSignal): Promise<boolean> {
    const members = cluster.members;
    if (members.length === 0 || !(await this.ensureBucket(cluster))) return false;
    const answers = await Promise.all(
      members.map((node) =>
        signal.aborted
          ? Promise.resolve(false)
          : this.withAdmin(node, cluster, async (conn) => {
              const body = JSON.stringify({ last_by_subj: keySubject(READY_KEY) });
              const last = lastValue(await conn.request(STREAM_MSG_GET, body, ADMIN_TIMEOUT_MS));
              return last.kind !== 'error';
            }),
      ),
    );
    return answers.every((a) => a === true);
  }

  /** Whether the bucket's stream exists, after creating it if a server says it does not. */
  private async ensureBucket(cluster: ClusterView): Promise<boolean> {
    const replicas = Math.min(BUCKET_REPLICAS, cluster.members.length);
    for (const node of cluster.members) {
      const exists = await this.withAdmin(node, cluster, async (conn) => {
        const info = apiReply(await conn.request(STREAM_INFO, '', ADMIN_TIMEOUT_MS));
        if ('failed' in info) return undefined;
        if (info.error?.err_code !== JS_ERR.streamNotFound) return info.error === undefined;
        // Creating a stream that exists with the same configuration answers its info: harmless.
        const body = JSON.stringify(bucketConfig(replicas));
        const created = apiReply(await conn.request(STREAM_CREATE, body, ADMIN_TIMEOUT_MS));
        return !('failed' in created) && created.error === undefined;
      });
      if (exists !== undefined) return exists;
    }
    return false;
  }

  client(node: string, cluster: ClusterView, timeoutMs: number): KvClient {
    return new NatsKvClient(cluster.clientAddress(node, 'client'), timeoutMs);
  }

  /** The bucket stream's leader, as the first server that answers `STREAM.INFO` names it. */
  private async currentLeader(cluster: ClusterView): Promise<string | undefined> {
    for (const node of cluster.members) {
      const name = await this.withAdmin(node, cluster, async (conn) =>
        streamLeader(await conn.request(STREAM_INFO, '', LEADER_TIMEOUT_MS)),
      );
      if (name !== undefined) return cluster.nodes.includes(name) ? name : undefined;
    }
    return undefined;
  }

  parseLog(line: string): ParsedLogEvent | undefined {
    return parseNatsLog(line);
  }

  close(): Promise<void> {
    for (const conn of this.admin.values()) conn.close();
    this.admin.clear();
    return Promise.resolve();
  }
}

/** NATS JetStream from Debian's nats-server, over a KV bucket; no bug switches. */
export const system: SystemDefinition = {
  name: 'nats',
  defaultNodes: 3,
  bugs: [],
  create: () => new NatsAdapter(true),
};

/**
 * The same with reads and writes only (`--system examples/nats/read-write.ts`): concurrent
 * conditional writes break in 2.9 within seconds (README, finding 1), which would hide anything
 * else a schedule holds (stale reads, lost writes).
 */
export const readWrite: SystemDefinition = {
  name: 'nats-rw',
  defaultNodes: 3,
  bugs: [],
  create: () => new NatsAdapter(false),
};

export default system;
