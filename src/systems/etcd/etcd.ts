import { createHash } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';

import type { Address } from '../../cluster/net/backend.js';
import { sleep } from '../../core/clock.js';
import { toBase64 } from '../_internals/base64.js';
import { checkBinary } from '../check-binary.js';
import type {
  MembershipCapability,
  LeaderCapability,
  ClusterView,
  DoctorFinding,
  KvClient,
  LaunchOptions,
  LaunchSpec,
  Readiness,
  ReadyCheck,
  SystemAdapter,
  SystemDefinition,
  TransactionsCapability,
} from '../system.js';
import { TXN_WORKLOADS } from '../system.js';
import { EtcdClient } from './client.js';
import { gateway, readMembers, readStatus, type EtcdMember } from './gateway.js';
import { parseEtcdLog } from './log.js';
import { EtcdTxnClient } from './txn-client.js';

export const ETCD_PORTS = { client: 2379, peer: 2380 } as const;
const ADMIN_TIMEOUT_MS = 2_000;
/**
 * A membership change answers once the serving member has applied it: a commit on every voter of a
 * two-member cluster, each with a WAL fsync, which on a loaded machine's disk took over 2 s.
 */
const MEMBERSHIP_TIMEOUT_MS = 5_000;
/** How long a membership change is proposed again while no quorum read shows it committed. */
const MEMBERSHIP_BUDGET_MS = 15_000;
const MEMBERSHIP_RETRY_PAUSE_MS = 250;
const READY_TIMEOUT_MS = 1_000;
/** Lower than etcd's default (100,000) so snapshots and log compaction happen within a campaign. */
const SNAPSHOT_COUNT = 2_000;
const HEARTBEAT_MS = 100;
const ELECTION_TIMEOUT_MS = 1_000;
const READY_KEY = 'mallory-ready';

function url(address: Address): string {
  return `http://${address.host}:${address.port}`;
}

/** A node's one peer address, the same for every other node (etcd hashes it into member ids). */
function peerUrl(node: string, cluster: ClusterView): string {
  return url(cluster.listen(node, 'peer'));
}

/** The members to ask, `avoid` (the node a change is about) last. */
function servingOrder(cluster: ClusterView, avoid: string): string[] {
  return [...cluster.members.filter((n) => n !== avoid), ...cluster.members.filter((n) => n === avoid)];
}

function dataDir(node: string, cluster: ClusterView): string {
  return join(cluster.dataDir(node), 'etcd');
}

class EtcdAdapter implements SystemAdapter {
  readonly name = 'etcd';
  readonly services = ['client', 'peer'] as const;
  readonly peerServices = ['peer'] as const;
  readonly ports = ETCD_PORTS;
  readonly leadership: LeaderCapability = { leader: (cluster) => this.currentLeader(cluster) };
  readonly membership: MembershipCapability = {
    // Raft: a change commits through a majority of the members.
    quorum: true,
    add: (node, cluster, signal) => this.addMember(node, cluster, signal),
    remove: (node, cluster, signal) => this.removeMember(node, cluster, signal),
    configuration: (cluster) => this.committedConfiguration(cluster),
  };
  readonly supportsCas = true;
  /** Its whole state (WAL, snapshots, the bbolt database) is under the node's data dir. */
  readonly diskFaults = true;
  /**
   * A follower fsyncs its WAL before it acknowledges an entry, and a write is acknowledged once a
   * quorum has it, so a minority losing what it had not fsynced loses no acknowledged write. Not
   * `disk-loss`: etcd 3.4's Raft leader counts its own entry toward the quorum before its own
   * fsync, so an acknowledged write may be on one follower's disk only; should every node lose
   * what it had not fsynced, the other two can elect a leader without it.
   */
  readonly durability = 'minority-disk-loss' as const;
  readonly crashPatterns = [
    /"level":"(panic|fatal)"/,
    /^panic: /,
    /fatal error: /,
    /goroutine \d+ \[running\]/,
    /SIGSEGV|segmentation violation/,
  ];
  readonly membershipExitPatterns = [
    // A joiner (no WAL yet) whose peers do not list it, or cannot be reached: checked only then.
    /"msg":"(?:failed to start etcd|discovery failed)","error":"(?:error validating peerURLs|cannot fetch cluster info from peer urls|member count is unequal)/,
    // A member that applies its own removal stops its server and exits 0, often before the
    // nemesis kills it.
    /"msg":"server error","error":"the member has been permanently removed from the cluster"/,
  ];

  doctor(): Promise<readonly DoctorFinding[]> {
    return Promise.all([checkBinary('etcd', ['--version'], 'etcd-server', 'etcd')]);
  }

  launch(node: string, cluster: ClusterView, options: LaunchOptions): LaunchSpec {
    const dir = dataDir(node, cluster);
    mkdirSync(cluster.dataDir(node), { recursive: true });
    // A joiner with a WAL (restarted after a kill) ignores the --initial-cluster flags.
    const initial = options.join ? [...new Set([...cluster.members, node])] : cluster.nodes;
    const token = `mallory-${createHash('sha256').update(cluster.runDir).digest('hex').slice(0, 12)}`;
    return {
      command: 'etcd',
      args: [
        '--name',
        node,
        '--data-dir',
        dir,
        '--listen-client-urls',
        url(cluster.listen(node, 'client')),
        '--advertise-client-urls',
        url(cluster.clientAddress(node, 'client')),
        '--listen-peer-urls',
        url(cluster.listen(node, 'peer')),
        '--initial-advertise-peer-urls',
        peerUrl(node, cluster),
        '--initial-cluster',
        initial.map((n) => `${n}=${peerUrl(n, cluster)}`).join(','),
        '--initial-cluster-state',
        options.join ? 'existing' : 'new',
        '--initial-cluster-token',
        token,
        '--heartbeat-interval',
        String(HEARTBEAT_MS),
        '--election-timeout',
        String(ELECTION_TIMEOUT_MS),
        '--snapshot-count',
        String(SNAPSHOT_COUNT),
        // etcd refuses a removal ("unhealthy cluster") unless every other member has been
        // connected for 5 s, which a fault every 2.5 s rarely allows: membership faults need it off.
        '--strict-reconfig-check=false',
        '--logger',
        'zap',
        '--log-outputs',
        'stderr',
      ],
      env: { GOMAXPROCS: '1' },
    };
  }

  async ready(cluster: ClusterView, signal: AbortSignal): Promise<Readiness> {
    const checks = await Promise.all(
      cluster.members.map(async (node): Promise<ReadyCheck> => {
        if (signal.aborted) return { node, check: 'read', ok: false, detail: 'not asked: out of time' };
        const outcome = await gateway(
          cluster.clientAddress(node, 'client'),
          '/v3/kv/range',
          { key: toBase64(READY_KEY) },
          READY_TIMEOUT_MS,
        );
        const detail =
          outcome.kind === 'ok'
            ? 'served'
            : outcome.kind === 'error'
              ? `error ${outcome.status}: ${outcome.message}`
              : `${outcome.kind}: ${outcome.error}`;
        return { node, check: 'read', ok: outcome.kind === 'ok', detail };
      }),
    );
    return { ready: checks.length > 0 && checks.every((c) => c.ok), checks };
  }

  client(node: string, cluster: ClusterView, timeoutMs: number): KvClient {
    return new EtcdClient(cluster.clientAddress(node, 'client'), timeoutMs);
  }

  /**
   * Optimistic transactions (`EtcdTxnClient`): a linearizable snapshot read, then a commit guarded
   * by every key's mod revision, so each transaction takes effect at one point between its call and
   * its reply: strict serializability. The same commit takes a guard (the bank workload).
   */
  readonly transactions: TransactionsCapability = {
    workloads: TXN_WORKLOADS,
    consistency: 'strict-serializable',
    client: (node, cluster, timeoutMs) => new EtcdTxnClient(cluster.clientAddress(node, 'client'), timeoutMs),
    guardedClient: (node, cluster, timeoutMs) =>
      new EtcdTxnClient(cluster.clientAddress(node, 'client'), timeoutMs),
  };

  private async currentLeader(cluster: ClusterView): Promise<string | undefined> {
    const statuses = await Promise.all(
      cluster.members.map(async (node) => {
        const outcome = await gateway(
          cluster.clientAddress(node, 'client'),
          '/v3/maintenance/status',
          {},
          ADMIN_TIMEOUT_MS,
        );
        return outcome.kind === 'ok' ? { node, ...readStatus(outcome.json) } : undefined;
      }),
    );
    const known = statuses.filter((s) => s !== undefined);
    const leaderIds = new Set(known.map((s) => s.leader).filter((id) => id !== 0n));
    // Only a leader its own status confirms: a stale follower may still name a deposed one.
    return known.find((s) => leaderIds.has(s.memberId) && s.leader === s.memberId)?.node;
  }

  /** Asks the members (the target last) until one answers. */
  private async admin(
    cluster: ClusterView,
    path: string,
    body: unknown,
    avoid: string,
    timeoutMs = ADMIN_TIMEOUT_MS,
  ): Promise<unknown> {
    const order = servingOrder(cluster, avoid);
    const errors: string[] = [];
    for (const node of order) {
      const outcome = await gateway(cluster.clientAddress(node, 'client'), path, body, timeoutMs);
      if (outcome.kind === 'ok') return outcome.json;
      errors.push(`${node}: ${outcome.kind === 'error' ? outcome.message : outcome.error}`);
    }
    throw new Error(`etcd ${path} failed on every member (${errors.join('; ')})`);
  }

  private async members(cluster: ClusterView, avoid: string): Promise<EtcdMember[]> {
    return readMembers(await this.admin(cluster, '/v3/cluster/member/list', {}, avoid));
  }

  private async removeMember(node: string, cluster: ClusterView, signal?: AbortSignal): Promise<void> {
    const target = peerUrl(node, cluster);
    // Any member's list names the member id; one that lacks the node may lag behind its add.
    let member = (await this.members(cluster, node)).find((m) => m.peerUrls.includes(target));
    if (!member) {
      const committed = await this.committedMembers(cluster);
      if (!committed) throw new Error(`etcd: no member answers a quorum read, so ${node} cannot be removed`);
      member = committed.find((m) => m.peerUrls.includes(target));
      if (!member) return;
    }
    const id = member.id;
    await this.reconfigure(
      cluster,
      '/v3/cluster/member/remove',
      { ID: id.toString() },
      node,
      (members) => members.every((m) => m.id !== id),
      signal,
    );
  }

  /**
   * Answers once the add is committed. If it still is not when the budget is spent, it throws and
   * the nemesis asks `configuration()` (the last proposal may yet commit).
   */
  private async addMember(node: string, cluster: ClusterView, signal?: AbortSignal): Promise<void> {
    const target = peerUrl(node, cluster);
    await this.reconfigure(
      cluster,
      '/v3/cluster/member/add',
      { peerURLs: [target] },
      node,
      (members) => members.some((m) => m.peerUrls.includes(target)),
      signal,
    );
  }

  /**
   * Proposes a membership change, one member at a time, until a member answers it or a quorum read
   * shows it `committed`, for up to MEMBERSHIP_BUDGET_MS. etcd's Raft leader silently drops a
   * change proposed before it has applied the entries of its own election (its log says "ignoring
   * conf change" right after "became leader"): the change never commits and its caller only times
   * out, so a change that is not committed after a timeout is proposed again. A retry refused
   * because the earlier proposal did take effect (the peer URL taken, the member gone) is answered
   * by the quorum read.
   */
  private async reconfigure(
    cluster: ClusterView,
    path: string,
    body: unknown,
    avoid: string,
    committed: (members: readonly EtcdMember[]) => boolean,
    signal?: AbortSignal,
  ): Promise<void> {
    const deadline = Date.now() + MEMBERSHIP_BUDGET_MS;
    const errors: string[] = [];
    for (let attempt = 0; ; attempt++) {
      // Past the run's budget or stopping: no new proposal (the reset reconciles with what committed).
      if (signal?.aborted)
        throw new Error(`etcd ${path} cut short after ${errors.length} proposals (${errors.join('; ')})`);
      const order = servingOrder(cluster, avoid);
      const node = order[attempt % order.length];
      const outcome = await gateway(cluster.clientAddress(node, 'client'), path, body, MEMBERSHIP_TIMEOUT_MS);
      if (outcome.kind === 'ok') return;
      errors.push(`${node}: ${outcome.kind === 'error' ? outcome.message : outcome.error}`);
      const after = await this.committedMembers(cluster);
      if (after !== undefined && committed(after)) return;
      if (Date.now() >= deadline) break;
      await sleep(MEMBERSHIP_RETRY_PAUSE_MS, signal);
    }
    throw new Error(`etcd ${path} was not committed after ${errors.length} proposals (${errors.join('; ')})`);
  }

  private async committedConfiguration(cluster: ClusterView): Promise<readonly string[] | undefined> {
    const committed = await this.committedMembers(cluster);
    if (!committed) return undefined;
    const urls = new Set(committed.flatMap((m) => m.peerUrls));
    return cluster.nodes.filter((n) => urls.has(peerUrl(n, cluster)));
  }

  /**
   * The member list after a linearizable read on the same member (the read needs a quorum, and the
   * member has then applied every change committed before it); a member's list alone may lag
   * behind an add or a removal.
   */
  private async committedMembers(cluster: ClusterView): Promise<EtcdMember[] | undefined> {
    const lists = await Promise.all(
      cluster.members.map(async (node) => {
        const address = cluster.clientAddress(node, 'client');
        const read = await gateway(address, '/v3/kv/range', { key: toBase64(READY_KEY) }, ADMIN_TIMEOUT_MS);
        if (read.kind !== 'ok') return undefined;
        const list = await gateway(address, '/v3/cluster/member/list', {}, ADMIN_TIMEOUT_MS);
        return list.kind === 'ok' ? readMembers(list.json) : undefined;
      }),
    );
    return lists.find((l) => l !== undefined);
  }

  parseLog(line: string): ReturnType<typeof parseEtcdLog> {
    return parseEtcdLog(line);
  }
}

/** etcd 3.4 from Debian's etcd-server: our negative control (it should be linearizable). */
export const etcd: SystemDefinition = {
  name: 'etcd',
  defaultNodes: 3,
  bugs: [],
  create: () => new EtcdAdapter(),
};
