import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';

import type { ReadConsistency } from '../../check/sequential-reads.js';
import type { Address } from '../../cluster/net/backend.js';
import { sleep } from '../../core/clock.js';
import { checkBinary } from '../check-binary.js';
import { httpCall } from '../_internals/http.js';
import type {
  MembershipCapability,
  LeaderCapability,
  ClusterView,
  DoctorFinding,
  KvClient,
  LaunchOptions,
  LaunchSpec,
  ParsedLogEvent,
  Readiness,
  ReadyCheck,
  SystemAdapter,
  SystemDefinition,
  TransactionsCapability,
} from '../system.js';
import { TXN_WORKLOADS } from '../system.js';
import type { KnownIssue } from '../known-issue.js';
import { buildDqliteApp, DEBIAN_GOPATH, dqliteAppBinary } from './app-source.js';
import { DqliteClient } from './client.js';
import { parseDqliteLog } from './log.js';
import { dqliteShell, parseClusterJson } from './shell.js';
import { DqliteTxnClient } from './txn-client.js';

export const DQLITE_PORTS = { api: 8001, db: 9001 } as const;
const READY_TIMEOUT_MS = 2_000;
const READY_KEY = 'mallory-ready';
/** A write on the harness's own key (the apps' table): it commits only through a quorum. */
const QUORUM_WRITE = `INSERT OR REPLACE INTO model(key, value) VALUES('${READY_KEY}', 'ready')`;
const REMOVE_CHECKS = 3;
const LEADER_TIMEOUT_MS = 2_000;
const REMOVE_CHECK_INTERVAL_MS = 500;

function hostPort(address: Address): string {
  return `${address.host}:${address.port}`;
}

/**
 * dqlite through Debian's go-dqlite demo app (`dqlite-demo`: HTTP GET/PUT /KEY on a replicated
 * SQLite table), with raft and dqlite traces on. The first node bootstraps the cluster; the others
 * (and a node re-added after a removal, with a fresh data dir) join through `--join`.
 */
/** Raft entries between snapshots (and kept after one) in our app: often enough for faults to meet. */
export const APP_SNAPSHOT_THRESHOLD = 128;

/**
 * go-dqlite before 1.22 (Debian ships 1.11.5, in dqlite-demo and in our app alike): a connection
 * aborted or closed during leader discovery is taken for a pre-1.0 server, so the client talks the
 * legacy protocol to the leader that server reports, and `Client.Leader` reads that protocol's
 * one-word "no leader" reply with the new decoder and panics once the leader loses leadership.
 * Found by a dqlite-app negative control (seed 3) after a packet delay's connection resets; the
 * fallback is gone since canonical/go-dqlite#287 (v1.22.0).
 */
export const GO_DQLITE_LEGACY_LEADER_ISSUE: KnownIssue = {
  id: 'canonical/go-dqlite#287',
  url: 'https://github.com/canonical/go-dqlite/pull/287',
  why: "go-dqlite before 1.22 takes a connection aborted during leader discovery for a pre-1.0 server, speaks the legacy protocol to the leader it reports, and decodes that protocol's 'no leader' reply as the new one: the app panics when that leader loses leadership (fixed in v1.22.0)",
  // Whatever ends a node's connections: a cut, a packet fault's reset, a peer killed, paused or removed.
  after: ['start-partition', 'start-packet', 'kill', 'pause', 'member-remove', 'member-add'],
  line: /^panic: short message: type=1 words=1 off=8/,
};

/**
 * libraft before 0.17.1 (Debian ships 0.15.0): a follower that truncates an uncommitted
 * configuration entry rolls back to the last committed configuration, looked up in its log; when a
 * snapshot has compacted that entry away the lookup returns nothing and, the assertion compiled
 * out, the node dereferences it and dies of SIGSEGV (canonical/raft#250, #323; fixed by
 * "membership: Ensure configuration rollback is possible", canonical/raft#354). Seen in dqlite
 * and dqlite-app negative controls after a leader's self-removal was cut off and truncated.
 */
export const RAFT_MEMBERSHIP_ROLLBACK_ISSUE: KnownIssue = {
  id: 'canonical/raft#250',
  url: 'https://github.com/canonical/raft/issues/250',
  why: 'libraft before 0.17.1 dies of SIGSEGV when it rolls back an uncommitted configuration whose committed predecessor a snapshot compacted away (fixed in 0.17.1, canonical/raft#354)',
  // A removal or addition left uncommitted, then truncated by a leader elected behind a fault.
  after: ['member-remove', 'member-add', 'start-partition', 'start-packet', 'kill', 'pause'],
  line: /src\/membership\.c:\d+ roll back membership$/,
};

interface Variant {
  readonly name: 'dqlite' | 'dqlite-app';
  /** Our app (built from Debian's go-dqlite sources) instead of dqlite-demo: cas, frequent snapshots. */
  readonly app: boolean;
}

class DqliteAdapter implements SystemAdapter {
  readonly name: Variant['name'];
  readonly supportsCas: boolean;
  /**
   * Our app's transactions (POST /txn), checked as serializable: dqlite's consistency model
   * (https://dqlite.io/docs/explanation/consistency-model) says its transactions "can be
   * serialized, however they cannot be linearized" — one writer at a time, each reader on a
   * committed snapshot, but a read transaction need not see the latest commit (a leader cut off
   * from a majority serves its own state until it steps down). A transaction commits as one raft
   * entry. A guard is read inside the transaction (the bank workload).
   */
  readonly transactions?: TransactionsCapability;

  constructor(private readonly variant: Variant) {
    this.name = variant.name;
    this.supportsCas = variant.app;
    if (variant.app) {
      this.transactions = {
        workloads: TXN_WORKLOADS,
        consistency: 'serializable',
        client: (node, cluster, timeoutMs) =>
          new DqliteTxnClient(cluster.clientAddress(node, 'api'), timeoutMs),
        guardedClient: (node, cluster, timeoutMs) =>
          new DqliteTxnClient(cluster.clientAddress(node, 'api'), timeoutMs),
      };
    }
  }

  /**
   * dqlite's documented consistency model (https://dqlite.io/docs/explanation/consistency-model):
   * reads are not linearizable. A leader cut off from a majority answers reads from its own state
   * until it steps down, without asking a quorum (canonical/go-dqlite#207 asks for quorum reads),
   * so a read may be stale; writes commit through a quorum. A negative control (seed 3) saw exactly
   * that: the isolated old leader's reads on n4 missed writes the new leader n5 had acknowledged.
   */
  readonly readConsistency: ReadConsistency = 'sequential';

  readonly services = ['api', 'db'] as const;
  readonly peerServices = ['db'] as const;
  readonly ports = DQLITE_PORTS;
  readonly leadership: LeaderCapability = { leader: (cluster) => this.currentLeader(cluster) };
  readonly membership: MembershipCapability = {
    // Raft: a change commits through a majority of the members.
    quorum: true,
    add: (node, cluster, signal) => this.addMember(node, cluster, signal),
    remove: (node, cluster, signal) => this.removeMember(node, cluster, signal),
    configuration: (cluster) => this.committedConfiguration(cluster),
  };
  readonly knownIssues = [GO_DQLITE_LEGACY_LEADER_ISSUE, RAFT_MEMBERSHIP_ROLLBACK_ISSUE];
  readonly crashPatterns = [
    /^panic: /,
    /fatal error: /,
    /goroutine \d+ \[running\]/,
    /SIGSEGV|segmentation (fault|violation)/i,
    /Assertion .* failed/,
    /AddressSanitizer/,
    /core dumped/,
    /\baborted\b/i,
  ];

  doctor(): Promise<readonly DoctorFinding[]> {
    const shell = checkBinary('dqlite', ['--help'], 'go-dqlite', 'dqlite shell');
    if (!this.variant.app) {
      return Promise.all([checkBinary('dqlite-demo', ['--help'], 'go-dqlite', 'dqlite-demo'), shell]);
    }
    const sources: DoctorFinding = existsSync(join(DEBIAN_GOPATH, 'src/github.com/canonical/go-dqlite/app'))
      ? { ok: true, what: 'go-dqlite sources (to build our dqlite app)' }
      : {
          ok: false,
          what: 'go-dqlite sources (to build our dqlite app) not found',
          fix: 'apt-get install -y golang-github-canonical-go-dqlite-dev',
        };
    return Promise.all([
      checkBinary('go', ['version'], 'golang-go', 'go compiler'),
      Promise.resolve(sources),
      shell,
    ]);
  }

  /** Builds our app once (cached by source hash) before the first launch. */
  async prepare(): Promise<void> {
    if (this.variant.app) await buildDqliteApp();
  }

  private dir(node: string, cluster: ClusterView): string {
    return join(cluster.dataDir(node), 'dqlite');
  }

  launch(node: string, cluster: ClusterView, options: LaunchOptions): LaunchSpec {
    const dir = this.dir(node, cluster);
    mkdirSync(dir, { recursive: true });
    const bootstrap = cluster.nodes[0];
    const peers = options.join
      ? cluster.members.filter((n) => n !== node)
      : node === bootstrap
        ? []
        : [bootstrap];
    const join = peers.map((p) => hostPort(cluster.dial(node, p, 'db')));
    const snapshots = this.variant.app
      ? [
          '--snapshot-threshold',
          String(APP_SNAPSHOT_THRESHOLD),
          '--snapshot-trailing',
          String(APP_SNAPSHOT_THRESHOLD),
        ]
      : [];
    return {
      // Our app is built here: on other hosts it runs from a copy the run uploads there.
      command: this.variant.app ? dqliteAppBinary() : 'dqlite-demo',
      built: this.variant.app,
      args: [
        ...snapshots,
        '--api',
        hostPort(cluster.listen(node, 'api')),
        '--db',
        hostPort(cluster.listen(node, 'db')),
        '--dir',
        dir,
        ...(join.length > 0 ? ['--join', join.join(',')] : []),
        '--verbose',
      ],
      env: { LIBRAFT_TRACE: '1', LIBDQLITE_TRACE: '1' },
    };
  }

  private servers(cluster: ClusterView, except?: string): Address[] {
    return cluster.members.filter((n) => n !== except).map((n) => cluster.clientAddress(n, 'db'));
  }

  /**
   * Every member answers a read, and the cluster's configuration lists every member; says the
   * answer to each (a no-recovery finding shows them).
   */
  async ready(cluster: ClusterView): Promise<Readiness> {
    const reads = await Promise.all(
      cluster.members.map((n) =>
        httpCall({
          address: cluster.clientAddress(n, 'api'),
          method: 'GET',
          path: `/${READY_KEY}`,
          timeoutMs: READY_TIMEOUT_MS,
        }),
      ),
    );
    const checks: ReadyCheck[] = reads.map((r, i) => {
      const ok =
        r.kind === 'response' && (/no rows in result set/.test(r.body) || !r.body.startsWith('Error'));
      const detail = r.kind === 'response' ? (ok ? 'served' : r.body.trim()) : `${r.kind}: ${r.error}`;
      return { node: cluster.members[i], check: 'read', ok, detail };
    });
    const served = checks.every((c) => c.ok);
    // Not asked while a read fails: shell connections to nodes still joining coincided with a
    // dqlite-demo node ending its start-up on EOF (under investigation), so the configuration is
    // read, with each server's id, only once the nodes serve.
    if (!served) return { ready: false, checks };
    const shell = await dqliteShell(this.servers(cluster), ['.cluster', '--format', 'json']);
    const members = shell.code === 0 ? parseClusterJson(shell.stdout) : undefined;
    const check = 'configuration lists every member';
    if (!members) {
      const detail = `no configuration: ${(shell.stderr || shell.stdout).trim() || `exit ${shell.code}`}`;
      return { ready: false, checks: [...checks, { check, ok: false, detail }] };
    }
    const known = new Set(members.map((m) => m.address));
    const missing = cluster.members.filter((n) => !known.has(hostPort(cluster.clientAddress(n, 'db'))));
    const listed = members
      .map((m) => (m.id !== undefined ? `${m.address} (id ${m.id})` : m.address))
      .join(',');
    const detail = missing.length === 0 ? listed : `${missing.join(',')} missing (lists ${listed})`;
    const ok = missing.length === 0;
    return { ready: served && ok, checks: [...checks, { check, ok, detail }] };
  }

  client(node: string, cluster: ClusterView, timeoutMs: number): KvClient {
    return new DqliteClient(cluster.clientAddress(node, 'api'), timeoutMs, this.variant.app);
  }

  /** The leader most members name, each asked on its own (a paused member only costs a timeout). */
  private async currentLeader(cluster: ClusterView): Promise<string | undefined> {
    const answers = await Promise.all(
      cluster.members.map((n) =>
        dqliteShell([cluster.clientAddress(n, 'db')], ['.leader'], LEADER_TIMEOUT_MS),
      ),
    );
    const votes = new Map<string, number>();
    for (const a of answers) {
      const address = a.code === 0 ? a.stdout.trim() : '';
      if (address !== '') votes.set(address, (votes.get(address) ?? 0) + 1);
    }
    const best = [...votes.entries()].sort((x, y) => y[1] - x[1])[0] as [string, number] | undefined;
    return best && cluster.nodes.find((n) => hostPort(cluster.clientAddress(n, 'db')) === best[0]);
  }

  /**
   * Removes the node from the raft configuration through the shell (asking the other members). The
   * removed process keeps running: the campaign kills and wipes it, and `launch(node, {join: true})`
   * brings it back through `--join`.
   */
  private async removeMember(node: string, cluster: ClusterView, signal?: AbortSignal): Promise<void> {
    const address = hostPort(cluster.clientAddress(node, 'db'));
    const shell = await dqliteShell(this.servers(cluster, node), [`.remove ${address}`], undefined, signal);
    if (shell.code === 0) return;
    // "lost leadership" and timeouts leave the outcome open: the configuration says what happened
    // (past the run's budget or stopping, the reset asks it).
    for (let attempt = 0; attempt < REMOVE_CHECKS && signal?.aborted !== true; attempt++) {
      const listed = await this.listing(cluster, node);
      if (listed && !listed.has(address)) return;
      if (listed) break;
      await sleep(REMOVE_CHECK_INTERVAL_MS, signal);
    }
    throw new Error(
      `dqlite .remove ${node} failed (exit ${shell.code}): ${shell.stderr.trim().split('\n')[0]}`,
    );
  }

  /**
   * The members of the leader's configuration, once a write through the leader has committed after
   * it and the configuration still reads the same (the leader's own view may hold a change not yet
   * committed; a write of a later entry commits it); undefined otherwise. Without it a removal that
   * answered "server has lost leadership" but committed a few seconds later went unseen: the removed
   * node was still counted a member, and every readiness check said it was missing from the
   * configuration (a false no-recovery finding).
   */
  private async committedConfiguration(cluster: ClusterView): Promise<readonly string[] | undefined> {
    const before = await this.listing(cluster);
    if (before === undefined) return undefined;
    const write = await dqliteShell(this.servers(cluster), [QUORUM_WRITE]);
    if (write.code !== 0) return undefined;
    const after = await this.listing(cluster);
    if (after === undefined || after.size !== before.size || [...after].some((a) => !before.has(a))) {
      return undefined;
    }
    return cluster.nodes.filter((n) => after.has(hostPort(cluster.clientAddress(n, 'db'))));
  }

  /**
   * The addresses in the configuration the leader answers with, asking the members (but `except`),
   * or undefined when none answers.
   */
  private async listing(cluster: ClusterView, except?: string): Promise<Set<string> | undefined> {
    const shell = await dqliteShell(this.servers(cluster, except), ['.cluster', '--format', 'json']);
    const members = shell.code === 0 ? parseClusterJson(shell.stdout) : undefined;
    return members && new Set(members.map((m) => m.address));
  }

  /**
   * A fresh node adds itself when launched (`--join`): before that, a write through the other
   * members checks that a quorum can take it now.
   */
  private async addMember(node: string, cluster: ClusterView, signal?: AbortSignal): Promise<void> {
    const shell = await dqliteShell(this.servers(cluster, node), [QUORUM_WRITE], undefined, signal);
    if (shell.code !== 0) {
      throw new Error(
        `dqlite cannot take ${node} back: a write through the other members did not commit (exit ${shell.code}): ${shell.stderr.trim().split('\n')[0]}`,
      );
    }
  }

  parseLog(line: string): ParsedLogEvent | undefined {
    return parseDqliteLog(line);
  }
}

/** dqlite 1.11 / raft 0.15 through Debian's go-dqlite demo app; read/write only (no cas). */
export const dqlite: SystemDefinition = {
  name: 'dqlite',
  defaultNodes: 5,
  bugs: [],
  create: () => new DqliteAdapter({ name: 'dqlite', app: false }),
};

/**
 * dqlite through our own small go-dqlite app (built offline from Debian's go-dqlite sources): the
 * demo's API plus compare-and-set and transactions (`--workload list-append|rw-register`), and a
 * snapshot every 128 raft entries instead of 1024.
 */
export const dqliteApp: SystemDefinition = {
  name: 'dqlite-app',
  defaultNodes: 5,
  bugs: [],
  create: () => new DqliteAdapter({ name: 'dqlite-app', app: true }),
};
