import { within } from '../../core/clock.js';
import { shellLine, shellQuote } from '../../core/shell.js';
import type { ResourceRegistry } from '../resources.js';
import { killGroupByPidScript, killGroupScript } from './_internals/group-shell.js';
import type { NodeRuntime } from './runtime.js';
import { undoOn } from './undo-on.js';

/** How long `stop` of a streaming command waits for it to end after the kill. */
const STOP_WAIT_MS = 5_000;

/** A long-lived command whose output streams back (`startStreaming`). */
export interface StreamingProcess {
  readonly pid: number;
  /** Resolves when the command's client or channel has closed (it ended, or the connection went). */
  readonly ended: Promise<void>;
  /** Ends its process group there and waits for it to end. */
  stop(): Promise<void>;
}

/** What `startStreaming` runs and where its output goes. */
export interface StreamingSpec {
  readonly argv: readonly string[];
  /** Names it in the run's registry (`tcpdump of n1`). */
  readonly label: string;
  /** A pid file there, to record it by before it runs (absent: recorded once it said its pid). */
  readonly pidFile?: string;
  readonly onStdout: (chunk: Buffer) => void;
  /** What it writes on stderr, as text. */
  readonly onStderr: (text: string) => void;
}

/**
 * Starts a long-lived command on `runtime`'s host whose stdout is data (e.g. `tcpdump -w -`),
 * written once over the runtime's live `exec` for every place. It leads its own process group and
 * is recorded as a node is: by its pid file before it runs, then by pid and start time (said on
 * stderr first, as stdout is the data). `stop` ends the group and forgets it; until then cleanup
 * ends it.
 */
export async function startStreaming(
  runtime: NodeRuntime,
  spec: StreamingSpec,
  registry: ResourceRegistry,
): Promise<StreamingProcess> {
  const { pidFile, label } = spec;
  const resourceId =
    pidFile === undefined
      ? undefined
      : registry.record(
          undoOn(runtime.place, killGroupScript(pidFile), `process group on ${runtime.host} (${label})`),
        );
  const writePid = pidFile === undefined ? '' : `echo "$$ $start" > ${shellQuote(pidFile)}; `;
  const inner =
    `start=$(cut -d' ' -f22 /proc/$$/stat); ${writePid}echo "pid $$ $start" >&2; ` +
    `exec ${shellLine(spec.argv)} </dev/null`;
  const abort = new AbortController();
  let closed = false;
  let started: { readonly pid: number; readonly start: string; readonly byPid: number } | undefined;
  let err = '';
  let said!: () => void;
  const saidPid = new Promise<void>((resolve) => (said = resolve));
  const onStderr = (d: Buffer): void => {
    const text = d.toString();
    if (started !== undefined) {
      spec.onStderr(text);
      return;
    }
    err += text;
    const match = /^pid (\d+) (\d+)$/m.exec(err);
    if (!match) return;
    const pid = Number(match[1]);
    const start = match[2];
    const byPid = registry.record(
      undoOn(
        runtime.place,
        killGroupByPidScript(pid, start),
        `process group ${pid} on ${runtime.host} (${label})`,
      ),
    );
    if (resourceId !== undefined) registry.forget(resourceId);
    started = { pid, start, byPid };
    said();
    const rest = err.slice(match.index + match[0].length).replace(/^\n/, '');
    if (rest !== '') spec.onStderr(rest);
  };
  const ended = runtime
    .exec(['setsid', '-w', 'sh', '-c', inner], { onStdout: spec.onStdout, onStderr, signal: abort.signal })
    .then(
      () => undefined,
      (error: unknown) => {
        err += error instanceof Error ? error.message : String(error);
      },
    )
    .then(() => {
      closed = true;
    });
  await Promise.race([saidPid, ended]);
  const running = started;
  if (running === undefined) {
    if (resourceId !== undefined) registry.forget(resourceId);
    throw new Error(`host ${runtime.host}: ${spec.argv[0]} did not start: ${err.trim() || 'it ended first'}`);
  }
  return {
    pid: running.pid,
    ended,
    stop: async () => {
      if (!closed) {
        await runtime
          .exec(['/bin/sh', '-c', killGroupByPidScript(running.pid, running.start)], { cleanup: true })
          .catch(() => undefined);
      }
      await within(ended, STOP_WAIT_MS, undefined);
      // Ended, or its connection is gone: the registry's own connection ends it at cleanup.
      if (closed) registry.forget(running.byPid);
      else abort.abort();
    },
  };
}
