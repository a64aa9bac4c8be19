import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import type { Address } from '../../cluster/net/backend.js';
import { type Clock, realClock } from '../../core/clock.js';
import type {
  MembershipCapability,
  LeaderCapability,
  ClusterView,
  DoctorFinding,
  LaunchOptions,
  LaunchSpec,
  Readiness,
  ReadyCheck,
  SystemAdapter,
  SystemDefinition,
  SystemOptions,
  TransactionsCapability,
  CounterCapability,
} from '../system.js';
import { TXN_WORKLOADS } from '../system.js';
import { type ClientIo, requestOnce } from './_internals/connection.js';
import type { NodeStatus } from './_internals/messages.js';
import { isKvraftBug, KVRAFT_BUGS } from './bugs.js';
import { KvraftClient } from './client.js';
import { nodeIo } from './_internals/node-seams.js';
import type { NodeIo } from './seams.js';

const STATUS_TIMEOUT_MS = 500;
const READY_READ_TIMEOUT_MS = 1500;
const READY_RETRY_MS = 100;
const ADMIN_TIMEOUT_MS = 3000;
const ADMIN_ATTEMPTS = 10;
const ADMIN_RETRY_MS = 300;

/** The compiled node program, next to this file in dist/ (or in dist/ when run from src/). */
export function nodeProgram(): string {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const beside = path.join(here, 'node.js');
  if (existsSync(beside)) return beside;
  return path.resolve(here, '../../../dist/systems/kvraft/node.js');
}

function hostPort(address: Address): string {
  return `${address.host}:${address.port}`;
}

/** Asks one node for its status; undefined when it does not answer in time. */
export async function nodeStatus(
  node: string,
  cluster: ClusterView,
  timeoutMs = STATUS_TIMEOUT_MS,
  io: ClientIo = nodeIo,
): Promise<NodeStatus | undefined> {
  const response = await requestOnce(cluster.clientAddress(node, 'client'), { op: 'status' }, timeoutMs, io);
  return 'status' in response ? response.status : undefined;
}

/** The node's wall clock (its `Date.now()`) as it answers; undefined when it does not answer in time. */
export async function nodeWallClockMs(
  node: string,
  cluster: ClusterView,
  timeoutMs = STATUS_TIMEOUT_MS,
): Promise<number | undefined> {
  const response = await requestOnce(
    cluster.clientAddress(node, 'client'),
    { op: 'status' },
    timeoutMs,
    nodeIo,
  );
  return 'wallMs' in response ? response.wallMs : undefined;
}

/** The node that claims leadership in the highest term, if any answers. */
export async function findLeader(cluster: ClusterView, io: ClientIo = nodeIo): Promise<string | undefined> {
  const statuses = await Promise.all(cluster.nodes.map((n) => nodeStatus(n, cluster, STATUS_TIMEOUT_MS, io)));
  let best: NodeStatus | undefined;
  for (const s of statuses) {
    if (s?.role === 'leader' && (!best || s.term > best.term)) best = s;
  }
  return best?.id;
}

class KvraftAdapter implements SystemAdapter {
  readonly name = 'kvraft';
  readonly services = ['client', 'peer'] as const;
  readonly peerServices = ['peer'] as const;
  readonly leadership: LeaderCapability = { leader: (cluster) => this.currentLeader(cluster) };
  readonly membership: MembershipCapability = {
    // Raft: a change commits through a majority of the members.
    quorum: true,
    add: (node, cluster, signal) => this.changeMembership('add-member', node, cluster, signal),
    remove: (node, cluster, signal) => this.changeMembership('remove-member', node, cluster, signal),
    configuration: (cluster) => this.committedConfiguration(cluster),
  };
  readonly clockFaults = true;
  readonly diskFaults = true;
  /**
   * Its log loader cuts a record torn anywhere (no newline, or not JSON), so a torn write may split
   * a sector.
   */
  readonly tornWrites = 'byte' as const;
  /** A write is acknowledged once a majority has fsynced it: it survives every node losing what it had not fsynced. */
  readonly durability = 'disk-loss' as const;
  readonly crashPatterns = [
    /ASSERTION FAILED/,
    /FATAL ERROR/,
    /^(?:Uncaught )?(?:Type|Range|Reference|Syntax)?Error: /m,
  ];

  constructor(
    private readonly bugs: readonly string[],
    /** The sockets its clients and queries use: the host's, or a simulated world's. */
    private readonly io: ClientIo = nodeIo,
    /** The time its retries wait on. */
    private readonly clock: Clock = realClock,
  ) {}

  doctor(): Promise<readonly DoctorFinding[]> {
    const program = nodeProgram();
    const ok = existsSync(program);
    return Promise.resolve([
      ok
        ? { ok, what: `kvraft node program ${program}` }
        : { ok, what: `kvraft node program missing: ${program}`, fix: 'npm run build' },
    ]);
  }

  launch(node: string, cluster: ClusterView, options: LaunchOptions): LaunchSpec {
    const probeDir = path.join(cluster.runDir, 'nodes', node);
    mkdirSync(probeDir, { recursive: true });
    const peers = cluster.nodes.map((other) =>
      other === node
        ? `${other}=${hostPort(cluster.listen(node, 'peer'))}`
        : `${other}=${hostPort(cluster.dial(node, other, 'peer'))}`,
    );
    const args = [
      nodeProgram(),
      '--id',
      node,
      '--data',
      cluster.dataDir(node),
      '--client',
      hostPort(cluster.listen(node, 'client')),
      '--peer',
      hostPort(cluster.listen(node, 'peer')),
      '--peers',
      peers.join(','),
      '--members',
      cluster.members.join(','),
      ...(options.join ? ['--join'] : []),
      ...this.bugs.flatMap((bug) => ['--bug', bug]),
    ];
    return {
      command: process.execPath,
      args,
      env: { MALLORY_PROBE_FILE: path.join(probeDir, 'probe.jsonl') },
    };
  }

  /** A leader exists and a read through it succeeds (retried until `signal`); says the last try's answers. */
  async ready(cluster: ClusterView, signal: AbortSignal): Promise<Readiness> {
    let checks: ReadyCheck[] = [{ check: 'a leader', ok: false, detail: 'not asked: out of time' }];
    while (!signal.aborted) {
      const leader = await findLeader(cluster, this.io);
      checks = [{ check: 'a leader', ok: leader !== undefined, detail: leader ?? 'no node says it leads' }];
      if (leader !== undefined) {
        const client = this.client(leader, cluster, READY_READ_TIMEOUT_MS);
        const result = await client.read('__mallory_ready__');
        await client.close();
        const detail = result.type === 'ok' ? 'served' : `${result.type}: ${result.error}`;
        checks.push({ node: leader, check: 'read', ok: result.type === 'ok', detail });
        if (result.type === 'ok') return { ready: true, checks };
      }
      await this.clock.sleep(READY_RETRY_MS, signal);
    }
    return { ready: false, checks };
  }

  client(node: string, cluster: ClusterView, timeoutMs: number): KvraftClient {
    const addresses = new Map(cluster.nodes.map((n) => [n, cluster.clientAddress(n, 'client')]));
    return new KvraftClient(node, addresses, timeoutMs, this.io);
  }

  /**
   * Each transaction is one log entry, applied at once: strict serializability. A guard is checked
   * when the entry applies (the bank workload).
   */
  readonly transactions: TransactionsCapability = {
    workloads: TXN_WORKLOADS,
    client: (node, cluster, timeoutMs) => this.client(node, cluster, timeoutMs),
    guardedClient: (node, cluster, timeoutMs) => this.client(node, cluster, timeoutMs),
  };

  /** Atomic adds, one log entry each, and the register's linearizable reads (`--workload counter`). */
  readonly counters: CounterCapability = {
    client: (node, cluster, timeoutMs) => this.client(node, cluster, timeoutMs),
  };

  private currentLeader(cluster: ClusterView): Promise<string | undefined> {
    return findLeader(cluster, this.io);
  }

  /**
   * The leader's configuration once it is committed; undefined while a change is only appended (it
   * may still be overwritten, so the nemesis must not act on it — it once wiped a leader whose
   * self-removal never committed, and the two remaining members could not elect anyone).
   */
  private async committedConfiguration(cluster: ClusterView): Promise<readonly string[] | undefined> {
    const leader = await findLeader(cluster, this.io);
    const status =
      leader === undefined ? undefined : await nodeStatus(leader, cluster, STATUS_TIMEOUT_MS, this.io);
    return status && status.commit >= status.configIndex ? status.members : undefined;
  }

  parseLog(): undefined {
    return undefined;
  }

  private async membershipDone(
    op: 'add-member' | 'remove-member',
    node: string,
    cluster: ClusterView,
  ): Promise<boolean> {
    const members = await this.committedConfiguration(cluster);
    return members !== undefined && members.includes(node) === (op === 'add-member');
  }

  private async changeMembership(
    op: 'add-member' | 'remove-member',
    node: string,
    cluster: ClusterView,
    signal?: AbortSignal,
  ): Promise<void> {
    let last = 'no leader';
    for (let attempt = 0; attempt < ADMIN_ATTEMPTS; attempt++) {
      // Past the run's budget or stopping: no new proposal (the reset reconciles with what committed).
      if (signal?.aborted)
        throw new Error(`kvraft ${op} ${node} cut short after ${attempt} attempts: ${last}`);
      const leader = await findLeader(cluster, this.io);
      if (leader !== undefined) {
        const response = await requestOnce(
          cluster.clientAddress(leader, 'client'),
          { op, node },
          ADMIN_TIMEOUT_MS,
          this.io,
          signal,
        );
        if ('ok' in response && response.ok) return;
        last = 'error' in response ? response.error : 'unexpected response';
      }
      if (signal?.aborted) throw new Error(`kvraft ${op} ${node} cut short: ${last}`);
      // An unknown outcome may still have committed: the retry sees it and answers ok at once.
      if (await this.membershipDone(op, node, cluster)) return;
      await this.clock.sleep(ADMIN_RETRY_MS, signal);
    }
    throw new Error(`kvraft ${op} ${node} failed: ${last}`);
  }
}

/** The built-in Raft key-value store, with bug switches (see README.md). */
export const kvraft: SystemDefinition = {
  name: 'kvraft',
  defaultNodes: 3,
  bugs: KVRAFT_BUGS,
  create(options: SystemOptions): SystemAdapter {
    for (const bug of options.bugs) {
      if (!isKvraftBug(bug)) {
        throw new Error(`kvraft has no bug "${bug}": choose from ${KVRAFT_BUGS.join(', ')}`);
      }
    }
    return kvraftAdapter(options.bugs);
  },
};

/**
 * kvraft's adapter with its clients' sockets and its waits taken from outside: the host's by
 * default; the simulator passes its world's client process and clock, so the same adapter drives
 * simulated nodes.
 */
export function kvraftAdapter(
  bugs: readonly string[],
  io?: Pick<NodeIo, 'net' | 'env'>,
  clock?: Clock,
): SystemAdapter {
  return new KvraftAdapter(bugs, io, clock);
}
