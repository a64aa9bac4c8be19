import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { join } from 'node:path';

import { Cluster } from '../../cluster/cluster.js';
import type { ReadyAttempt } from '../../cluster/node-system.js';
import { NetnsBackend } from '../../cluster/net/netns.js';
import { ProxyBackend } from '../../cluster/net/proxy.js';
import { UsageError } from '../../core/errors.js';
import type { CheckpointManifest } from '../../store/checkpoint-files.js';
import { Interrupted } from './interrupted.js';
import type { LiveRun } from './live-run.js';

/**
 * Starts every node — on empty data dirs, or on a checkpoint's (`plan.startFrom`) — and waits for
 * the system to serve; one that never does is the user's to fix.
 */
export async function startCluster(live: LiveRun): Promise<void> {
  const { signal, plan, store, parts, config } = live;
  if (plan.startFrom) await startFromCheckpoint(live, plan.startFrom);
  else await parts.cluster.startAll();
  if (signal.aborted) throw new Interrupted();
  const attempts: ReadyAttempt[] = [];
  const { cluster } = parts;
  // A cluster whose every node has exited can never serve: start-up fails at once, not at its timeout.
  const allExited = new AbortController();
  const stopWatch = live.clock.every(EXITED_POLL_MS, () => {
    // A member a checkpoint kept killed is not started: with the others exited, none runs.
    const statuses = cluster.members.map((n) => cluster.statusOf(n));
    if (statuses.includes('exited') && statuses.every((s) => s === 'exited' || s === 'killed')) {
      allExited.abort();
    }
  });
  let ready: boolean;
  try {
    ready = await cluster.waitReady(
      config.startupTimeoutMs,
      AbortSignal.any([signal, allExited.signal]),
      attempts,
    );
  } finally {
    stopWatch();
  }
  if (ready) return;
  if (signal.aborted) throw new Interrupted();
  const name = plan.definition.name;
  const seconds = config.startupTimeoutMs / 1000;
  const logs = join(store.dir, 'nodes');
  if (allExited.signal.aborted) {
    const exits = cluster.members
      .filter((node) => cluster.statusOf(node) === 'exited')
      .map((node) => {
        const exit = live.state.exits.findLast((e) => e.node === node);
        const how =
          exit?.signal != null ? ` on ${exit.signal}` : exit?.code != null ? ` with code ${exit.code}` : '';
        const words = lastLogLine(join(logs, node));
        return `${node} exited${how}${words !== undefined ? ` ("${words}")` : ''}`;
      });
    throw new UsageError(
      'nodes-exited',
      `${name}: every node exited while starting (${exits.join('; ')}): see ${logs}`,
    );
  }
  // Every call hanging is the adapter's bug, not a slow system: say so rather than "did not serve".
  if (attempts.length > 0 && attempts.every((a) => a.unanswered)) {
    throw new UsageError(
      'ready-unanswered',
      `${name}: ready() never answered within ${seconds} s of starting (its promise neither resolved nor rejected): make ready() settle, and stop when its signal aborts; node logs in ${logs}`,
    );
  }
  const said = lastAnswer(
    attempts,
    parts.cluster.members,
    (node) => parts.cluster.statusOf(node),
    (node) => lastLogLine(join(logs, node)),
  );
  throw new UsageError(
    'not-ready',
    `${name} did not serve requests within ${seconds} s of starting${said}: see ${logs}; a system that starts slower needs a longer --startup-timeout`,
  );
}

/** How often start-up looks whether every node has exited. */
const EXITED_POLL_MS = 100;

/** How many of the last try's unmet checks the error names. */
const CHECKS_NAMED = 3;

/**
 * What the last try of `ready()` said, and which nodes' processes are no longer running, as a
 * parenthesis for the error (empty when there is nothing to say).
 */
export function lastAnswer(
  attempts: readonly ReadyAttempt[],
  members: readonly string[],
  statusOf: (node: string) => string,
  lastWords: (node: string) => string | undefined = () => undefined,
): string {
  const parts: string[] = [];
  const last = attempts.at(-1);
  if (last?.error !== undefined) parts.push(`last try: ${last.error}`);
  const unmet = (last?.checks ?? []).filter((c) => !c.ok);
  if (unmet.length > 0) {
    const named = unmet
      .slice(0, CHECKS_NAMED)
      .map((c) => `${c.node !== undefined ? `${c.node} ` : ''}${c.check}: ${c.detail ?? 'no'}`);
    const more = unmet.length > CHECKS_NAMED ? `, and ${unmet.length - CHECKS_NAMED} more` : '';
    parts.push(`last try: ${named.join('; ')}${more}`);
  }
  const down = members
    .filter((n) => statusOf(n) !== 'running')
    .map((n) => {
      const words = statusOf(n) === 'exited' ? lastWords(n) : undefined;
      return `${n} ${statusOf(n)}${words !== undefined ? ` ("${words}")` : ''}`;
    });
  if (down.length > 0) parts.push(`not running: ${down.join(', ')}`);
  return parts.length === 0 ? '' : ` (${parts.join('; ')})`;
}

/**
 * Restores every node's data dir, membership and joiner flag from the checkpoint, then starts the
 * nodes that were running when it was taken. Says when the network could not take the addresses
 * the checkpoint's run had (a system that keeps peer addresses in its data may not start).
 */
async function startFromCheckpoint(
  live: LiveRun,
  from: NonNullable<LiveRun['plan']['startFrom']>,
): Promise<void> {
  const { parts, emit } = live;
  const { manifest } = from;
  // `planRun` refuses a checkpoint to a simulated run: its disks are the world's.
  if (!(parts.cluster instanceof Cluster)) throw new Error('a checkpoint starts real nodes only');
  await parts.cluster.restoreHostDataDirs(from.dir, manifest.nodes);
  emit(
    'message',
    `starting from the checkpoint of schedule ${manifest.schedule + 1}: ${from.dir} (${Math.round(manifest.bytes / 1024)} KiB)`,
  );
  const net = manifest.network;
  if (net.kind === 'netns' && parts.network instanceof NetnsBackend && parts.network.subnet !== net.subnet) {
    emit(
      'message',
      `  the checkpoint's subnet ${net.subnet} is taken: the nodes have new addresses in ${parts.network.subnet}`,
    );
  }
  if (net.kind === 'proxy' && parts.network instanceof ProxyBackend && parts.network.unpinned.length > 0) {
    const moved = parts.network.unpinned;
    emit(
      'message',
      `  ${moved.length} of the checkpoint's ports are taken (${moved.slice(0, 3).join(', ')}${moved.length > 3 ? ', …' : ''}): those addresses changed, and a node that stored them may not find its peers`,
    );
  }
  restoreClocks(live, manifest.nodes);
  for (const state of manifest.nodes) {
    if (state.member && (state.status === 'running' || state.status === 'paused')) {
      await parts.cluster.start(state.node);
    }
  }
}

/**
 * Puts each node's clock back at the offset the checkpoint recorded, before the node starts (a
 * heal resets clocks, so this is 0 but for a checkpoint taken with a clock still moved); says so
 * when the run has no clock faults to move them with.
 */
function restoreClocks(live: LiveRun, nodes: CheckpointManifest['nodes']): void {
  const moved = nodes.filter((n) => n.clockOffsetMs !== 0);
  if (moved.length === 0) return;
  const said = moved.map(
    (n) => `${n.node} ${n.clockOffsetMs > 0 ? '+' : ''}${Math.round(n.clockOffsetMs)} ms`,
  );
  const { clocks } = live.parts;
  if (clocks === undefined) {
    live.emit(
      'message',
      `  the checkpoint's clock offsets (${said.join(', ')}) are not applied: this run has no clock faults (add --faults clock)`,
    );
    return;
  }
  for (const n of moved) clocks.set(n.node, n.clockOffsetMs);
  live.emit('message', `  clocks as at the checkpoint: ${said.join(', ')}`);
}

/** How much of a log's end is read for its last line. */
const LOG_TAIL_BYTES = 4096;
/** The longest last line quoted in the error. */
const LAST_LINE_CHARS = 200;

/** A line that names an error (`Error: Cannot find module …`, `panic: …`, `FATAL …`). */
const ERROR_LINE = /\b(error|exception|panic|fatal)\b/i;
/** A runtime's trailer after the error it printed: Node's `Node.js v20.…`, a stack frame, a brace. */
const TRAILER_LINE = /^(Node\.js v\d|at |[\]}{)^]+$)/;

/**
 * The line that says why a node exited (its stderr, else its stdout): the last that names an error
 * in what it wrote last, else the last that is not a runtime's trailer (Node ends a crash with its
 * version and a stack), else the last non-empty one. Undefined when it wrote nothing.
 */
export function lastLogLine(nodeDir: string): string | undefined {
  for (const file of ['stderr.log', 'stdout.log']) {
    let text: string;
    try {
      const fd = openSync(join(nodeDir, file), 'r');
      try {
        const size = fstatSync(fd).size;
        const buffer = Buffer.alloc(Math.min(size, LOG_TAIL_BYTES));
        readSync(fd, buffer, 0, buffer.length, size - buffer.length);
        text = buffer.toString('utf8');
      } finally {
        closeSync(fd);
      }
    } catch {
      continue;
    }
    const lines = text
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l !== '');
    const line =
      lines.findLast((l) => ERROR_LINE.test(l)) ??
      lines.findLast((l) => !TRAILER_LINE.test(l)) ??
      lines.at(-1);
    if (line !== undefined)
      return line.length > LAST_LINE_CHARS ? `${line.slice(0, LAST_LINE_CHARS)}…` : line;
  }
  return undefined;
}
