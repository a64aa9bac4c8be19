import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';

import type { Address } from '../../cluster/net/backend.js';
import { checkBinary } from '../_internals/doctor.js';
import { httpCall } from '../_internals/http.js';
import type {
  ClusterView,
  DoctorFinding,
  KvClient,
  LaunchOptions,
  LaunchSpec,
  ParsedLogEvent,
  SystemAdapter,
  SystemDefinition,
} from '../system.js';
import { DqliteClient } from './client.js';
import { parseDqliteLog } from './log.js';
import { dqliteShell, parseClusterJson } from './shell.js';

export const DQLITE_PORTS = { api: 8001, db: 9001 } as const;
const READY_TIMEOUT_MS = 2_000;
const READY_KEY = 'mallory-ready';

function hostPort(address: Address): string {
  return `${address.host}:${address.port}`;
}

/**
 * dqlite through Debian's go-dqlite demo app (`dqlite-demo`: HTTP GET/PUT /KEY on a replicated
 * SQLite table), with raft and dqlite traces on. The first node bootstraps the cluster; the others
 * (and a node re-added after a removal, with a fresh data dir) join through `--join`.
 */
class DqliteAdapter implements SystemAdapter {
  readonly name = 'dqlite';
  readonly services = ['api', 'db'] as const;
  readonly peerServices = ['db'] as const;
  readonly ports = DQLITE_PORTS;
  readonly supportsLeader = true;
  readonly supportsMembership = true;
  readonly supportsCas = false;
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
    return Promise.all([
      checkBinary('dqlite-demo', ['--help'], 'go-dqlite', 'dqlite-demo'),
      checkBinary('dqlite', ['--help'], 'go-dqlite', 'dqlite shell'),
    ]);
  }

  private dir(node: string, cluster: ClusterView): string {
    return join(cluster.dataDir(node), 'dqlite');
  }

  launch(node: string, cluster: ClusterView, options: LaunchOptions): LaunchSpec {
    const dir = this.dir(node, cluster);
    if (options.join) rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    const bootstrap = cluster.nodes[0];
    const peers = options.join
      ? cluster.members.filter((n) => n !== node)
      : node === bootstrap
        ? []
        : [bootstrap];
    const join = peers.map((p) => hostPort(cluster.dial(node, p, 'db')));
    return {
      command: 'dqlite-demo',
      args: [
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

  /** Every member answers a read, and the cluster's configuration lists every member. */
  async ready(cluster: ClusterView): Promise<boolean> {
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
    const serving = reads.every(
      (r) => r.kind === 'response' && (/no rows in result set/.test(r.body) || !r.body.startsWith('Error')),
    );
    if (!serving) return false;
    const shell = await dqliteShell(this.servers(cluster), ['.cluster', '--format', 'json']);
    const members = shell.code === 0 ? parseClusterJson(shell.stdout) : undefined;
    if (!members) return false;
    const known = new Set(members.map((m) => m.address));
    return cluster.members.every((n) => known.has(hostPort(cluster.clientAddress(n, 'db'))));
  }

  client(node: string, cluster: ClusterView, timeoutMs: number): KvClient {
    return new DqliteClient(cluster.clientAddress(node, 'api'), timeoutMs);
  }

  async leader(cluster: ClusterView): Promise<string | undefined> {
    const shell = await dqliteShell(this.servers(cluster), ['.leader']);
    const address = shell.code === 0 ? shell.stdout.trim() : '';
    return cluster.nodes.find((n) => hostPort(cluster.clientAddress(n, 'db')) === address);
  }

  /**
   * Removes the node from the raft configuration through the shell (asking the other members). The
   * removed process keeps running: the campaign kills and wipes it, and `launch(node, {join: true})`
   * brings it back empty through `--join`.
   */
  async memberRemove(node: string, cluster: ClusterView): Promise<void> {
    const shell = await dqliteShell(this.servers(cluster, node), [
      `.remove ${hostPort(cluster.clientAddress(node, 'db'))}`,
    ]);
    if (shell.code !== 0)
      throw new Error(`dqlite .remove ${node} failed (exit ${shell.code}): ${shell.stderr.trim()}`);
  }

  /** Nothing to do before the start: a fresh node joins by itself (`--join`) when launched. */
  memberAdd(): Promise<void> {
    return Promise.resolve();
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
  create: () => new DqliteAdapter(),
};
