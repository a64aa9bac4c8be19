import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import type { Address } from '../../cluster/net/backend.js';
import { checkBinary } from '../check-binary.js';
import type { Durability } from '../../check/durability.js';
import type {
  FailoverLoss,
  LeaderCapability,
  KnownIssue,
  RecoveryException,
  ClusterView,
  CounterCapability,
  DoctorFinding,
  LaunchSpec,
  ParsedLogEvent,
  Readiness,
  ReadyCheck,
  SetCapability,
  SystemAdapter,
  SystemDefinition,
} from '../system.js';
import { askSentinels, MASTER_NAME, RedisClient, RedisCounterClient, RedisSetClient } from './client.js';
import { parseRedisLog } from './log.js';
import { isRespError, respOnce, type RespValue } from './resp.js';

export const REDIS_PORTS = { redis: 6379, sentinel: 26379 } as const;
const DOWN_AFTER_MS = 1_000;
const FAILOVER_TIMEOUT_MS = 5_000;
const ADMIN_TIMEOUT_MS = 1_000;
/**
 * How long Redis with Sentinel may take to serve again once the faults are healed: a sentinel whose
 * process was stopped (a pause) or whose clock jumped enters TILT mode and changes nothing for 30 s
 * (fixed in Redis 7.0; Redis Sentinel documentation, "TILT mode"), then a failover may still wait
 * twice the failover timeout after an aborted one.
 */
const SENTINEL_TILT_MS = 30_000;
const RECOVERY_TIMEOUT_MS = SENTINEL_TILT_MS + 3 * FAILOVER_TIMEOUT_MS;
/** Redis's default (60 s) leaves a replica stuck in a cut handshake longer than the reset waits. */
const REPL_TIMEOUT_S = 5;

/** Redis's `appendfsync` (`--set appendfsync=…`): when the AOF is fsynced. */
export const APPENDFSYNC = ['everysec', 'always'] as const;
export type Appendfsync = (typeof APPENDFSYNC)[number];

/**
 * What an acknowledged write survives. One node: under `everysec` the last second of the AOF may
 * not be on disk yet (a process crash loses nothing, the OS still has it); under `always` every
 * write is fsynced before its reply. More nodes: replication is asynchronous, and a Sentinel
 * failover — which any primary going down, with its disk or not, can set off — loses acknowledged
 * writes that had not reached the promoted replica, whatever each disk kept; so Redis promises no
 * more than `process-crash`, and declares the writes a failover loses (`REDIS_FAILOVER_LOSS`).
 */
export function redisDurability(appendfsync: Appendfsync, nodes: number): Durability {
  return nodes === 1 && appendfsync === 'always' ? 'disk-loss' : 'process-crash';
}

/**
 * The writes a Sentinel failover may lose, as Redis documents it: replication is asynchronous, so a
 * write the old primary acknowledged may never reach the replica Sentinel promotes (or reach a
 * primary cut off from the others, demoted when it rejoins). The leader changed when a replica says
 * `MASTER MODE enabled` (promoted) or a sentinel says `+switch-master`. A primary that was cut off or
 * restarted (`Ready to accept connections` as `M`) keeps serving its own data while a replica is
 * promoted, until Sentinel makes it a replica and it finishes its sync with the new primary (`MASTER
 * <-> REPLICA sync: Finished with success`): what clients wrote or read there is lost then.
 */
export const REDIS_FAILOVER_LOSS: FailoverLoss = {
  events: ['promoted', 'sentinel+switch-master'],
  splitBrain: { promoted: 'promoted', started: 'ready', converged: ['sync-finished'] },
  why: 'replication is asynchronous: a Sentinel failover loses the writes the promoted replica had not received (Redis Sentinel documentation, "Consistency under partitions")',
};

/** The reply of a node whose last background AOF fsync failed (the errno of our `fsync-error`). */
const AOF_FSYNC_MISCONF = /^MISCONF Errors writing to the AOF file: Input\/output error/;

/**
 * Redis ≥ 7.0 (redis/redis#8419, "Handle remaining fsync errors"): a failed background fsync of
 * the AOF sets its fsync status to error, and from then on the server refuses writes — and PING,
 * so replicas cannot sync from it and Sentinel sees no healthy node — with `-MISCONF Errors writing
 * to the AOF file`, until a later fsync of the AOF succeeds. Nothing in that state waits for the
 * disk to be healed: it was seen to last past the recovery bound after `heal-disk` (`mallory run
 * --system redis --faults disk`), though not after every `fsync-error` (a failover or an AOF
 * rewrite may end it). Shown by a primary (ROLE master) answering PING so with EIO, the errno of
 * the `fsync-error` fault.
 */
/**
 * Redis 7 refuses to start on an AOF whose unsynced tail a power loss left as zeros or a torn
 * command, even with `aof-load-truncated yes`, until an operator runs `redis-check-aof --fix`; Redis
 * 8 added an opt-in repair of a corrupt tail (redis/redis#14058), which Debian 12's 7.0.15 lacks.
 */
export const REDIS_AOF_TAIL_ISSUE: KnownIssue = {
  id: 'redis/redis#5177',
  url: 'https://github.com/redis/redis/issues/5177',
  why: 'Redis 7 will not load an AOF whose unsynced tail a power loss left torn or zero-filled, even with aof-load-truncated yes, until redis-check-aof --fix (open; an opt-in repair came in Redis 8, redis/redis#14058)',
  after: ['torn-write', 'lose-unfsynced'],
  line: /Bad file format reading the append only file/,
};

export const REDIS_AOF_FSYNC_EXCEPTION: RecoveryException = {
  after: ['fsync-error'],
  why: 'Redis ≥ 7.0 refuses writes and PING with -MISCONF after a failed background AOF fsync until a later AOF fsync succeeds, which a healed disk does not bring by itself (redis/redis#8419)',
  holds: async (cluster, timeoutMs) => {
    for (const node of cluster.members) {
      const address = cluster.clientAddress(node, 'redis');
      const role = await respOnce(address, ['ROLE'], timeoutMs);
      if (role.kind !== 'reply' || !Array.isArray(role.value) || role.value[0] !== 'master') continue;
      const ping = await respOnce(address, ['PING'], timeoutMs);
      if (ping.kind === 'reply' && isRespError(ping.value) && AOF_FSYNC_MISCONF.test(ping.value.error)) {
        return `${node}, a primary (ROLE master), answers PING with -${ping.value.error}`;
      }
    }
    return undefined;
  },
};

/**
 * Writes a file and makes it durable (the file and its directory fsynced), as a deployment's
 * configuration is: under the disk layer, a file written and never fsynced is gone after a
 * `lose-unfsynced`.
 */
function writeDurably(path: string, dir: string, text: string): void {
  writeFileSync(path, text);
  for (const target of [path, dir]) {
    const fd = openSync(target, 'r');
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  }
}

function sameAddress(a: Address, b: Address): boolean {
  return a.host === b.host && a.port === b.port;
}

/**
 * Redis 7 with Sentinel: one primary (the first node at the start), the others its replicas, and a
 * sentinel on every node. A node is one process group: `sh` starts the node's sentinel in the
 * background and then becomes its redis-server, so kill, pause and restart act on the node's redis
 * and its sentinel together (as when a machine fails), and the cluster runtime needs no extra
 * process. Both write to the node's log (sentinel lines carry the role letter X).
 */
class RedisAdapter implements SystemAdapter {
  readonly name = 'redis';
  readonly services = ['redis', 'sentinel'] as const;
  readonly peerServices = ['redis', 'sentinel'] as const;
  readonly ports = REDIS_PORTS;
  readonly leadership: LeaderCapability = { leader: (cluster) => this.currentLeader(cluster) };
  readonly supportsCas = true;
  /** The AOF (`appendonlydir/`), both config files and Sentinel's state live in the node's data dir. */
  readonly diskFaults = true;
  readonly durability: Durability;
  readonly failoverLoss = REDIS_FAILOVER_LOSS;
  readonly recoveryExceptions = [REDIS_AOF_FSYNC_EXCEPTION];
  readonly knownIssues = [REDIS_AOF_TAIL_ISSUE];
  readonly recoveryTimeoutMs = RECOVERY_TIMEOUT_MS;
  readonly crashPatterns = [
    /=== REDIS BUG REPORT START/,
    /ASSERTION FAILED/,
    /crashed by signal/,
    /Guru Meditation/,
    /Segmentation fault/,
  ];
  /** The last primary a client or leader lookup saw: a restarted node starts as its replica. */
  private primary: string | undefined;

  constructor(
    private readonly appendfsync: Appendfsync,
    nodes: number,
  ) {
    this.durability = redisDurability(appendfsync, nodes);
  }

  doctor(): Promise<readonly DoctorFinding[]> {
    return Promise.all([
      checkBinary('redis-server', ['--version'], 'redis-server', 'redis'),
      checkBinary('redis-sentinel', ['--version'], 'redis-sentinel', 'redis sentinel'),
    ]);
  }

  private nodeAt(address: Address, cluster: ClusterView): string | undefined {
    return cluster.nodes.find((n) => sameAddress(cluster.clientAddress(n, 'redis'), address));
  }

  launch(node: string, cluster: ClusterView): LaunchSpec {
    const dir = cluster.dataDir(node);
    mkdirSync(dir, { recursive: true });
    const primary = this.primary ?? cluster.nodes[0];
    const self = cluster.listen(node, 'redis');
    const primaryAddress = cluster.dial(node, primary, 'redis');
    const redisConf = join(dir, 'redis.conf');
    // Written once (first start, or after a wipe): afterwards the file is redis's own, with the
    // REPLICAOF that sentinel persists through CONFIG REWRITE, as in a real deployment.
    if (!existsSync(redisConf)) {
      writeDurably(
        redisConf,
        dir,
        [
          `bind ${self.host}`,
          `port ${self.port}`,
          'protected-mode no',
          `dir ${dir}`,
          'appendonly yes',
          `appendfsync ${this.appendfsync}`,
          'save ""',
          'repl-diskless-sync yes',
          'repl-diskless-sync-delay 0',
          `repl-timeout ${REPL_TIMEOUT_S}`,
          ...(primary === node ? [] : [`replicaof ${primaryAddress.host} ${primaryAddress.port}`]),
          '',
        ].join('\n'),
      );
    }
    const sentinelConf = join(dir, 'sentinel.conf');
    // Sentinel rewrites its own file with what it learns; keep it across restarts (not wipes).
    if (!existsSync(sentinelConf)) {
      const sentinel = cluster.listen(node, 'sentinel');
      const quorum = Math.floor(cluster.nodes.length / 2) + 1;
      writeDurably(
        sentinelConf,
        dir,
        [
          `bind ${sentinel.host}`,
          `port ${sentinel.port}`,
          'protected-mode no',
          `dir ${dir}`,
          `sentinel monitor ${MASTER_NAME} ${primaryAddress.host} ${primaryAddress.port} ${quorum}`,
          `sentinel down-after-milliseconds ${MASTER_NAME} ${DOWN_AFTER_MS}`,
          `sentinel failover-timeout ${MASTER_NAME} ${FAILOVER_TIMEOUT_MS}`,
          `sentinel parallel-syncs ${MASTER_NAME} 1`,
          '',
        ].join('\n'),
      );
    }
    return {
      command: 'sh',
      args: [
        '-c',
        'redis-sentinel "$1" & exec redis-server "$2"',
        'mallory-redis-node',
        sentinelConf,
        redisConf,
      ],
    };
  }

  private sentinelsFor(node: string, cluster: ClusterView): Address[] {
    const order = [node, ...cluster.members.filter((n) => n !== node)];
    return order.map((n) => cluster.clientAddress(n, 'sentinel'));
  }

  /**
   * Every sentinel names one primary and knows every other sentinel and replica, and every member
   * is that primary or a replica with a live link; says each answer.
   */
  async ready(cluster: ClusterView): Promise<Readiness> {
    const members = cluster.members;
    const views = await Promise.all(
      members.map((n) =>
        respOnce(cluster.clientAddress(n, 'sentinel'), ['SENTINEL', 'master', MASTER_NAME], ADMIN_TIMEOUT_MS),
      ),
    );
    const addresses = new Set<string>();
    const checks: ReadyCheck[] = views.map((view, i): ReadyCheck => {
      const node = members[i];
      const check = 'sentinel knows the primary, the sentinels and the replicas';
      if (view.kind !== 'reply' || !Array.isArray(view.value)) {
        return {
          node,
          check,
          ok: false,
          detail: view.kind === 'reply' ? JSON.stringify(view.value) : view.error,
        };
      }
      const fields = pairs(view.value);
      const sentinels = Number(fields.get('num-other-sentinels'));
      const replicas = Number(fields.get('num-slaves'));
      const primary = `${fields.get('ip')}:${fields.get('port')}`;
      addresses.add(primary);
      // A sentinel that does not know the replicas yet cannot fail over (-failover-abort-no-good-slave).
      // Flags may still say s_down/o_down or the sentinel may be in TILT (30 s after a pause): it
      // still names the primary, and clients are served.
      const ok = sentinels >= members.length - 1 && replicas >= members.length - 1;
      return {
        node,
        check,
        ok,
        detail: `primary ${primary}, ${sentinels} other sentinels, ${replicas} replicas`,
      };
    });
    if (!checks.every((c) => c.ok)) return { ready: false, checks };
    if (addresses.size !== 1) {
      const detail = [...addresses].join(' / ');
      return {
        ready: false,
        checks: [...checks, { check: 'sentinels agree on the primary', ok: false, detail }],
      };
    }
    const primary = [...addresses][0];
    // Every member is the primary or a replica with a live link (possibly chained through another replica).
    const roles = await Promise.all(
      members.map((n) => respOnce(cluster.clientAddress(n, 'redis'), ['ROLE'], ADMIN_TIMEOUT_MS)),
    );
    const roleChecks = members.map((node, i): ReadyCheck => {
      const role = roles[i];
      const check = 'role';
      if (role.kind !== 'reply' || !Array.isArray(role.value)) {
        return {
          node,
          check,
          ok: false,
          detail: role.kind === 'reply' ? JSON.stringify(role.value) : role.error,
        };
      }
      const value = role.value as readonly RespValue[];
      const address = cluster.clientAddress(node, 'redis');
      const isPrimary = `${address.host}:${address.port}` === primary;
      const ok = isPrimary ? value[0] === 'master' : value[0] === 'slave' && value[3] === 'connected';
      const detail = `${JSON.stringify(value[0])}${value[0] === 'slave' ? ` (link ${JSON.stringify(value[3])})` : ''}`;
      return { node, check, ok, detail: isPrimary ? `${detail}; the sentinels' primary` : detail };
    });
    const all = [...checks, ...roleChecks];
    return { ready: roleChecks.every((c) => c.ok), checks: all };
  }

  client(node: string, cluster: ClusterView, timeoutMs: number): RedisClient {
    return new RedisClient(this.sentinelsFor(node, cluster), timeoutMs, (address) => {
      const named = this.nodeAt(address, cluster);
      this.primary = named ?? this.primary;
      return named;
    });
  }

  /** SADD and SMEMBERS on the primary (`--workload set`). */
  readonly sets: SetCapability = {
    client: (node, cluster, timeoutMs) => new RedisSetClient(this.client(node, cluster, timeoutMs)),
  };

  /** INCRBY and GET on the primary (`--workload counter`). */
  readonly counters: CounterCapability = {
    client: (node, cluster, timeoutMs) => new RedisCounterClient(this.client(node, cluster, timeoutMs)),
  };

  /** The primary most reachable sentinels name. */
  private async currentLeader(cluster: ClusterView): Promise<string | undefined> {
    const votes = new Map<string, number>();
    for (const node of cluster.members) {
      const address = await askSentinels([cluster.clientAddress(node, 'sentinel')], ADMIN_TIMEOUT_MS);
      const named = address && this.nodeAt(address, cluster);
      if (named !== undefined) votes.set(named, (votes.get(named) ?? 0) + 1);
    }
    const best = [...votes.entries()].sort((a, b) => b[1] - a[1])[0] as [string, number] | undefined;
    if (best === undefined || best[1] <= cluster.members.length / 2) return undefined;
    this.primary = best[0];
    return best[0];
  }

  parseLog(line: string): ParsedLogEvent | undefined {
    return parseRedisLog(line);
  }
}

/** A flat RESP array of field/value pairs → a map. */
function pairs(value: readonly RespValue[]): Map<string, string> {
  const map = new Map<string, string>();
  for (let i = 0; i + 1 < value.length; i += 2) {
    const [k, v] = [value[i], value[i + 1]];
    if (typeof k === 'string' && (typeof v === 'string' || typeof v === 'number')) map.set(k, String(v));
  }
  return map;
}

function isAppendfsync(value: string | undefined): value is Appendfsync {
  return (APPENDFSYNC as readonly (string | undefined)[]).includes(value);
}

/**
 * Redis 7 + Sentinel from Debian: asynchronous replication loses acknowledged writes on failover.
 * `--nodes 1` runs one durable node (its sentinel names it to the clients).
 */
export const redis: SystemDefinition = {
  name: 'redis',
  defaultNodes: 3,
  bugs: [],
  settings: {
    appendfsync: {
      values: APPENDFSYNC,
      default: 'everysec',
      doc: 'when the AOF is fsynced: every second (a crash of the machine loses up to the last second) or before every reply',
    },
  },
  create: ({ settings, nodes = 3 }) =>
    new RedisAdapter(isAppendfsync(settings?.appendfsync) ? settings.appendfsync : 'everysec', nodes),
};
