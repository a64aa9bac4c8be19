import { join } from 'node:path';

import { lastLinesOf } from '../check/logs.js';
import type { NodeStatus } from '../cluster/cluster.js';
import type { ReadyAttempt, ReadyCheck } from '../cluster/node-system.js';
import type { HealRecord } from '../nemesis/nemesis.js';
import { rethrowHarness } from '../core/errors.js';
import type { ClientResult, ClusterView, SystemAdapter } from '../systems/system.js';
import { closeClient } from '../workload/close-client.js';

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
  /** What the system's `ready()` checked of this node in its last poll (e.g. its read). */
  readonly ready?: readonly ReadyCheck[];
}

/** The evidence of a `no-recovery` finding. */
export interface RecoveryEvidence {
  readonly resetErrors: readonly string[];
  /**
   * Every poll of the system's `ready` from the heal on (the first and last ones when there were
   * many: `attemptsLeftOut` says how many between them are not kept), with what each checked.
   */
  readonly attempts?: readonly ReadyAttempt[];
  readonly attemptsLeftOut?: number;
  /** The leader the system reports; null when it reports none, absent when it cannot tell. */
  readonly leader?: string | null;
  /** The members in the system's own configuration; null when it did not answer. */
  readonly members?: readonly string[] | null;
  readonly nodes: readonly NodeAnswer[];
  /**
   * What the last poll of `ready()` checked of the whole cluster (dqlite: the raft configuration
   * it read, and which members it lacks).
   */
  readonly clusterChecks?: readonly ReadyCheck[];
  /** The last heal before it: what each family undid, on which nodes, and its errors. */
  readonly lastHeal?: HealRecord;
}

/** What the recovery wait saw last, besides what the nodes answer when asked once more. */
export interface RecoveryContext {
  /** The last poll of `ready()`. */
  readonly lastAttempt?: ReadyAttempt;
  readonly lastHeal?: HealRecord;
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
  context: RecoveryContext = {},
): Promise<RecoveryEvidence> {
  const nodes: NodeAnswer[] = [];
  const checks = context.lastAttempt?.checks ?? [];
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
        await closeClient(client);
      }
    }
    const lastLines = ['stdout.log', 'stderr.log'].flatMap((s) =>
      lastLinesOf(join(cluster.logDir(node), s), LAST_LINES),
    );
    const ready = checks.filter((c) => c.node === node);
    nodes.push({
      node,
      status,
      member: cluster.isMember(node),
      ...(read ? { read } : {}),
      lastLines,
      ...(ready.length > 0 ? { ready } : {}),
    });
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
  const clusterChecks = checks.filter((c) => c.node === undefined);
  return {
    resetErrors,
    ...(leader !== undefined ? { leader } : {}),
    ...(members !== undefined ? { members } : {}),
    nodes,
    ...(clusterChecks.length > 0 ? { clusterChecks } : {}),
    ...(context.lastHeal !== undefined ? { lastHeal: context.lastHeal } : {}),
  };
}

/** A heal in words: `start n2; member-add n3` (a family that acted on no node names none). */
export function describeHeal(heal: HealRecord): string {
  if (heal.ops.length === 0) return 'nothing to undo';
  return heal.ops
    .map((op) => (Array.isArray(op.value) && op.value.length > 0 ? `${op.f} ${op.value.join(',')}` : op.f))
    .join('; ');
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
  if (evidence.lastHeal !== undefined) parts.push(`last heal: ${describeHeal(evidence.lastHeal)}`);
  return parts.join(' — ');
}

/** How many of the first and of the last readiness polls a finding keeps. */
const FIRST_ATTEMPTS_KEPT = 20;
const LAST_ATTEMPTS_KEPT = 100;

/** The polls a finding keeps: all of them, or the first and the last ones and how many are left out. */
export function keptAttempts(attempts: readonly ReadyAttempt[]): {
  readonly attempts: readonly ReadyAttempt[];
  readonly attemptsLeftOut?: number;
} {
  if (attempts.length <= FIRST_ATTEMPTS_KEPT + LAST_ATTEMPTS_KEPT) return { attempts };
  return {
    attempts: [...attempts.slice(0, FIRST_ATTEMPTS_KEPT), ...attempts.slice(-LAST_ATTEMPTS_KEPT)],
    attemptsLeftOut: attempts.length - FIRST_ATTEMPTS_KEPT - LAST_ATTEMPTS_KEPT,
  };
}

/** How many failed checks of one poll a message names. */
const CHECKS_NAMED = 6;
const DETAIL_CHARS = 80;

/** One poll in words: what failed (`n2 read: no leader; …`), what it threw, or that it said no. */
export function describeAttempt(attempt: ReadyAttempt): string {
  const at = `at ${(attempt.atMs / 1000).toFixed(1)} s`;
  if (attempt.error !== undefined) return `${at}: ready() threw: ${attempt.error.slice(0, DETAIL_CHARS)}`;
  if (attempt.ready) return `${at}: ready`;
  const failed = (attempt.checks ?? []).filter((c) => !c.ok);
  if (attempt.checks === undefined) return `${at}: not ready (the system's ready() says no more)`;
  if (failed.length === 0) return `${at}: not ready (every check it reported passed)`;
  const named = failed.slice(0, CHECKS_NAMED).map((c) => {
    const who = c.node === undefined ? '' : `${c.node} `;
    return `${who}${c.check}: ${(c.detail ?? 'failed').slice(0, DETAIL_CHARS)}`;
  });
  const more = failed.length > CHECKS_NAMED ? `; and ${failed.length - CHECKS_NAMED} more` : '';
  return `${at}: ${named.join('; ')}${more}`;
}
