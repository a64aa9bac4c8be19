import { randomBytes } from 'node:crypto';
import { open } from 'node:fs/promises';
import { PassThrough } from 'node:stream';

import { within } from '../../core/clock.js';
import { shellQuote } from '../../core/shell.js';
import type { ResourceRegistry } from '../resources.js';
import { killGroupByPidScript } from './_internals/group-shell.js';
import { FollowedBytes, tailFollowScript } from './_internals/tail-follow.js';
import type { NodeRuntime } from './runtime.js';
import { undoOn } from './undo-on.js';

/** How often a file on this machine is looked at for what was appended. */
const STREAM_POLL_MS = 100;
const STREAM_CHUNK_BYTES = 64 * 1024;
/** Files followed per command: one on its stdout, one on its stderr. */
const FILES_PER_TAIL_COMMAND = 2;
const MARKER_BYTES = 16;
/** How long stopping a tail waits for its bytes and its command before it ends the tail. */
const STOP_WAIT_MS = 5_000;

/** Stops following a file; resolves once the bytes written before `stop` are delivered. */
export interface FileStream {
  stop(): Promise<void>;
}

/**
 * Calls `onData` with what is appended to `path` on `runtime`'s host (from its start), as it
 * grows; it may not exist yet. Written once over the runtime's verbs: where the files are this
 * machine's (`sharedFilesystem`) it is read directly; elsewhere a tail runs there as a live `exec`
 * (`RemoteFollowers`). The tail's process group is recorded in `registry` when given, so `mallory
 * cleanup` ends it after a killed run.
 */
export function followFile(
  runtime: NodeRuntime,
  path: string,
  onData: (chunk: Buffer) => void,
  registry?: ResourceRegistry,
): FileStream {
  if (runtime.capabilities.sharedFilesystem) return readGrowing(path, onData);
  let followers = remoteFollowers.get(runtime);
  if (followers === undefined) {
    followers = new RemoteFollowers(runtime);
    remoteFollowers.set(runtime, followers);
  }
  return followers.follow(path, onData, registry);
}

/** Reads what is appended to a file of this machine every `STREAM_POLL_MS`. */
function readGrowing(path: string, onData: (chunk: Buffer) => void): FileStream {
  let offset = 0;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const poll = async (): Promise<void> => {
    try {
      const handle = await open(path, 'r');
      try {
        const buffer = Buffer.alloc(STREAM_CHUNK_BYTES);
        for (;;) {
          const { bytesRead } = await handle.read(buffer, 0, buffer.length, offset);
          if (bytesRead === 0) break;
          offset += bytesRead;
          onData(Buffer.from(buffer.subarray(0, bytesRead)));
        }
      } finally {
        await handle.close();
      }
    } catch {
      // not there yet
    }
  };
  let polling: Promise<void> = Promise.resolve();
  const tick = (): void => {
    polling = poll().finally(() => {
      if (!stopped) timer = setTimeout(tick, STREAM_POLL_MS);
    });
  };
  tick();
  return {
    stop: async () => {
      stopped = true;
      clearTimeout(timer);
      await polling;
      await poll();
    },
  };
}

/** A file asked to be followed in this turn of the event loop. */
interface TailMember {
  readonly path: string;
  readonly onData: (chunk: Buffer) => void;
  readonly registry: ResourceRegistry | undefined;
  readonly started: Promise<FileStream>;
  resolveStarted(stream: FileStream): void;
}

const remoteFollowers = new WeakMap<NodeRuntime, RemoteFollowers>();

/** Runs a kill at a stop there (`cleanup`); never rejects (a gone host is a failed command). */
function shellOn(runtime: NodeRuntime, script: string): Promise<unknown> {
  return runtime.exec(['/bin/sh', '-c', script], { cleanup: true }).catch(() => undefined);
}

/** The files followed on a host that is not this machine: by GNU tail two to a command, else one `tail -F` each. */
class RemoteFollowers {
  /** Whether the host has GNU tail (asked once, at the first `follow`). */
  private gnuTail: Promise<boolean> | undefined;
  private toFollow: TailMember[] = [];

  constructor(private readonly runtime: NodeRuntime) {}

  /**
   * Follows `path` binary-safe: by GNU `tail -F` in a live command (`tailFollowScript`), files
   * asked for in the same turn sharing commands two by two (a node's stdout, stderr and probe file
   * hold two channels, not three), each append sent as soon as it is written; on a host without
   * GNU tail, by a `tail -c +1 -F` of its own. `stop` makes the tail read what is left and exit,
   * and resolves once those bytes are delivered. On truncation the bytes go on from the file's new
   * start; a replaced file (rotation) is followed from its start.
   */
  follow(path: string, onData: (chunk: Buffer) => void, registry: ResourceRegistry | undefined): FileStream {
    let started!: (stream: FileStream) => void;
    const member: TailMember = {
      path,
      onData,
      registry,
      started: new Promise((resolve) => (started = resolve)),
      resolveStarted: (stream) => {
        started(stream);
      },
    };
    this.toFollow.push(member);
    if (this.toFollow.length === 1) {
      setImmediate(() => {
        const members = this.toFollow;
        this.toFollow = [];
        void this.followAll(members);
      });
    }
    return { stop: async () => (await member.started).stop() };
  }

  private hasGnuTail(): Promise<boolean> {
    this.gnuTail ??= this.runtime.exec(['/bin/sh', '-c', 'tail --version 2>/dev/null | head -n 1']).then(
      (r) => r.code === 0 && r.stdout.includes('GNU coreutils'),
      () => false,
    );
    return this.gnuTail;
  }

  private async followAll(members: readonly TailMember[]): Promise<void> {
    if (!(await this.hasGnuTail())) {
      for (const m of members) m.resolveStarted(this.plainTail(m.path, m.onData));
      return;
    }
    for (let i = 0; i < members.length; i += FILES_PER_TAIL_COMMAND) {
      const group = members.slice(i, i + FILES_PER_TAIL_COMMAND);
      this.tailCommand(group).forEach((stream, j) => {
        group[j].resolveStarted(stream);
      });
    }
  }

  /**
   * One live command following one or two files. Its process group is recorded by pid and start
   * time once it says them; before that, and on a lost connection, the end of its stdin makes the
   * shell stop its tails.
   */
  private tailCommand(group: readonly TailMember[]): FileStream[] {
    const runtime = this.runtime;
    const registry = group[0].registry;
    const marker = `mallory-tail-end-${randomBytes(MARKER_BYTES).toString('hex')}`;
    const script = tailFollowScript(
      group.map((m) => m.path),
      marker,
    );
    const files = group.map((m) => new FollowedBytes(marker, m.onData));
    const input = new PassThrough();
    const abort = new AbortController();
    let header: Buffer | undefined = Buffer.alloc(0);
    let leader: { readonly pid: number; readonly start: string } | undefined;
    let recorded: number | undefined;
    let closed = false;
    const onStdout = (d: Buffer): void => {
      let chunk = d;
      if (header !== undefined) {
        const all = Buffer.concat([header, d]);
        const newline = all.indexOf('\n');
        if (newline < 0) {
          header = all;
          return;
        }
        header = undefined;
        const said = /^pid (\d+) (\d+)$/.exec(all.subarray(0, newline).toString());
        if (said) {
          leader = { pid: Number(said[1]), start: said[2] };
          const label = `tail ${leader.pid} on ${runtime.host} (${group.map((m) => m.path).join(', ')})`;
          recorded = registry?.record(
            undoOn(runtime.place, killGroupByPidScript(leader.pid, leader.start), label),
          );
        }
        chunk = all.subarray(newline + 1);
      }
      files[0].push(chunk);
    };
    const ended = runtime
      .exec(['setsid', '-w', 'sh', '-c', script], {
        input,
        onStdout,
        onStderr: (d) => {
          files[1]?.push(d);
        },
        signal: abort.signal,
      })
      .catch(() => undefined)
      .then(() => {
        closed = true;
        for (const f of files) f.end();
        if (recorded !== undefined) registry?.forget(recorded);
      });
    const kill = async (): Promise<void> => {
      if (closed) return;
      if (leader !== undefined) await shellOn(runtime, killGroupByPidScript(leader.pid, leader.start));
      abort.abort();
      await within(ended, STOP_WAIT_MS, undefined);
    };
    let stopped = 0;
    return files.map((file, i) => {
      let stopping: Promise<void> | undefined;
      const stop = async (): Promise<void> => {
        file.stop();
        if (!closed) input.write(`${i + 1}\n`);
        const inTime = await within(
          file.finished.then(() => true),
          STOP_WAIT_MS,
          false,
        );
        if (!inTime) await kill();
        stopped++;
        if (stopped < files.length || closed) return;
        input.end();
        const closedInTime = await within(
          ended.then(() => true),
          STOP_WAIT_MS,
          false,
        );
        if (!closedInTime) await kill();
      };
      return { stop: () => (stopping ??= stop()) };
    });
  }

  /**
   * A `tail -c +1 -F` of its own (it waits for a file not there yet), its pid said first. Stopping
   * ends that tail and reads what is past the bytes already delivered, so nothing written before
   * `stop` is missed.
   */
  private plainTail(path: string, onData: (chunk: Buffer) => void): FileStream {
    const runtime = this.runtime;
    let delivered = 0;
    let tailPid: number | undefined;
    let header = '';
    const deliver = (chunk: Buffer): void => {
      if (chunk.length === 0) return;
      delivered += chunk.length;
      onData(chunk);
    };
    const abort = new AbortController();
    const ended = runtime
      .exec(['/bin/sh', '-c', `echo $$; exec tail -c +1 -F ${shellQuote(path)} 2>/dev/null`], {
        signal: abort.signal,
        onStdout: (d) => {
          if (tailPid !== undefined) {
            deliver(d);
            return;
          }
          header += d.toString('latin1');
          const newline = header.indexOf('\n');
          if (newline < 0) return;
          tailPid = Number(header.slice(0, newline));
          deliver(Buffer.from(header.slice(newline + 1), 'latin1'));
          header = '';
        },
      })
      .catch(() => undefined);
    return {
      stop: async () => {
        if (tailPid !== undefined) await shellOn(runtime, `kill ${tailPid} 2>/dev/null || true`);
        abort.abort();
        await ended;
        await runtime
          .exec(['/bin/sh', '-c', `tail -c +${delivered + 1} ${shellQuote(path)} 2>/dev/null || true`], {
            onStdout: deliver,
          })
          .catch(() => undefined);
      },
    };
  }
}
