import { join } from 'node:path';

import { lastLinesOf } from '../check/logs.js';
import type { NodeStatus } from '../cluster/cluster.js';
import { rethrowHarness } from '../core/errors.js';
import type { ClientResult, ClusterView, SystemAdapter } from '../systems/system.js';

/** What one node did when asked to serve after the reset. */
export interface NodeAnswer {
  readonly node: string;
  /** What the harness believes of the node's process. */
  readonly status: NodeStatus;
  readonly member: boolean;
  /** Its answer to a read; absent when its process was not running. */
  readonly read?: ClientResult;
  /** Its last lines (stdout and stderr), oldest first. */
  readonly lastLines: readonly string[];
}

/** The evidence of a `no-recovery` finding. */
export interface RecoveryEvidence {
  readonly resetErrors: readonly string[];
  /** The leader the system reports; null when it reports none, absent when it cannot tell. */
  readonly leader?: string | null;
  /** The members in the system's own configuration; null when it did not answer. */
  readonly members?: readonly string[] | null;
  readonly nodes: readonly NodeAnswer[];
}

export interface RecoveryCluster extends ClusterView {
  statusOf(node: string): NodeStatus;
  isMember(node: string): boolean;
  logDir(node: string): string;
}

/** A key no workload writes: a read of it asks only "do you serve?". */
const PROBE_KEY = 'mallory-recovery-probe';
const LAST_LINES = 10;

/**
 * Asks every node once more, after the system did not serve again within the recovery bound:
 * each node's answer to a read (through the workload's own client), the leader and members the
 * system reports, and each node's last log lines — what a maintainer asks first.
 */
export async function recoveryEvidence(
  cluster: RecoveryCluster,
  system: SystemAdapter,
  resetErrors: readonly string[],
  timeoutMs: number,
): Promise<RecoveryEvidence> {
  const nodes: NodeAnswer[] = [];
  for (const node of cluster.nodes) {
    const status = cluster.statusOf(node);
    let read: ClientResult | undefined;
    if (status === 'running') {
      const client = system.client(node, cluster, timeoutMs);
      try {
        read = await client.read(PROBE_KEY);
      } catch (error) {
        rethrowHarness(error);
        read = { type: 'info', error: error instanceof Error ? error.message : String(error) };
      } finally {
        await client.close().catch(() => undefined);
      }
    }
    const lastLines = ['stdout.log', 'stderr.log'].flatMap((s) =>
      lastLinesOf(join(cluster.logDir(node), s), LAST_LINES),
    );
    nodes.push({ node, status, member: cluster.isMember(node), ...(read ? { read } : {}), lastLines });
  }
  const ask = async <T>(
    question: (() => Promise<T | undefined>) | undefined,
  ): Promise<T | null | undefined> => {
    if (question === undefined) return undefined;
    try {
      return (await question()) ?? null;
    } catch (error) {
      rethrowHarness(error);
      return null;
    }
  };
  const leadership = system.leadership;
  const leader = await ask(leadership ? () => leadership.leader(cluster) : undefined);
  const configuration = system.membership?.configuration?.bind(system.membership);
  const members = await ask(configuration ? () => configuration(cluster) : undefined);
  return {
    resetErrors,
    ...(leader !== undefined ? { leader } : {}),
    ...(members !== undefined ? { members } : {}),
    nodes,
  };
}

/** One line: each node's answer, the leader and the members, e.g. for a finding's message. */
export function describeRecovery(evidence: RecoveryEvidence): string {
  const answers = evidence.nodes.map((n) => {
    const what =
      n.read === undefined
        ? n.status
        : n.read.type === 'ok'
          ? 'served a read'
          : `${n.read.type} (${n.read.error.slice(0, 80)})`;
    return `${n.node}${n.member ? '' : ' (not a member)'}: ${what}`;
  });
  const parts = [answers.join('; ')];
  if (evidence.leader !== undefined) parts.push(`leader: ${evidence.leader ?? 'none'}`);
  if (evidence.members !== undefined) {
    parts.push(`members: ${evidence.members === null ? 'no answer' : evidence.members.join(',')}`);
  }
  if (evidence.resetErrors.length > 0) parts.push(`reset errors: ${evidence.resetErrors.join('; ')}`);
  return parts.join(' — ');
}
