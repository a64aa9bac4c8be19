import { randomBytes } from 'node:crypto';

import { sleep, within } from '../../core/clock.js';
import { shellQuote } from '../../core/shell.js';
import { killGroupByPidScript } from './_internals/group-shell.js';
import { FollowedBytes, tailFollowScript } from './_internals/tail-follow.js';
import type { FileStream } from './runtime.js';
import type { SshConnection } from './ssh-connection.js';
import type { SshShells } from './ssh-shells.js';

/** Without GNU tail on the host, a followed file is read over SFTP this often. */
const STREAM_POLL_MS = 100;
/** Files followed per channel: one on its stdout, one on its stderr. */
const FILES_PER_TAIL_CHANNEL = 2;
const MARKER_BYTES = 16;
const STREAM_CHUNK_BYTES = 64 * 1024;
/** How long stopping a tail waits for its bytes and its channel before it ends the tail. */
const STOP_WAIT_MS = 5_000;

/** A file asked to be followed, until its channel (or polling) is set up. */
interface TailMember {
  readonly path: string;
  readonly onData: (chunk: Buffer) => void;
  readonly started: Promise<FileStream>;
  resolveStarted(stream: FileStream): void;
}

/** The files followed on a host as they grow: by GNU tail on shared channels, else by SFTP polling. */
export class SshFollowers {
  /** Whether the host has GNU tail (asked once, at the first `follow`). */
  private gnuTail: Promise<boolean> | undefined;
  /** Files asked to be followed in this turn of the event loop, to share tail channels. */
  private toFollow: TailMember[] = [];

  constructor(
    private readonly connection: SshConnection,
    private readonly shells: SshShells,
  ) {}

  /**
   * Follows `path` from its start as it grows, binary-safe: by GNU `tail -F` on a long-lived exec
   * channel (`tailFollowScript`), files asked for in the same turn sharing channels two by two (a
   * node's stdout, stderr and probe file hold two channels, not three), each append sent as soon as
   * it is written; on a host without GNU tail, by SFTP reads every 100 ms. `stop` makes the tail
   * read what is left and exit, and resolves once those bytes are delivered. On truncation the
   * bytes go on from the file's new start; a replaced file (rotation) is followed from its start.
   */
  follow(path: string, onData: (chunk: Buffer) => void): FileStream {
    let started!: (stream: FileStream) => void;
    const member: TailMember = {
      path,
      onData,
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

  /** Whether the host has GNU tail (`-F`, `--pid`), asked once. */
  private hasGnuTail(): Promise<boolean> {
    this.gnuTail ??= this.shells.run('tail --version 2>/dev/null | head -n 1').then(
      (r) => r.code === 0 && r.stdout.includes('GNU coreutils'),
      () => false,
    );
    return this.gnuTail;
  }

  private async followAll(members: readonly TailMember[]): Promise<void> {
    if (!(await this.hasGnuTail())) {
      for (const m of members) m.resolveStarted(this.pollStream(m.path, m.onData));
      return;
    }
    for (let i = 0; i < members.length; i += FILES_PER_TAIL_CHANNEL) {
      const group = members.slice(i, i + FILES_PER_TAIL_CHANNEL);
      void this.tailChannel(group).then(
        (streams) => {
          group.forEach((m, j) => {
            m.resolveStarted(streams[j]);
          });
        },
        () => {
          // no channel (the connection is gone or refuses one): read what can be read
          for (const m of group) m.resolveStarted(this.pollStream(m.path, m.onData));
        },
      );
    }
  }

  /**
   * One channel following one or two files. The tail's process group is recorded by pid and start
   * time once it says them, so `mallory cleanup` ends it after a killed run; before that, and on
   * any lost connection, the channel's end makes the shell stop its tails.
   */
  private async tailChannel(group: readonly TailMember[]): Promise<FileStream[]> {
    const marker = `mallory-tail-end-${randomBytes(MARKER_BYTES).toString('hex')}`;
    const script = tailFollowScript(
      group.map((m) => m.path),
      marker,
    );
    const { stream, release } = await this.connection.channel(
      this.connection.asRoot(`exec setsid -w sh -c ${shellQuote(script)}`),
    );
    const files = group.map((m) => new FollowedBytes(marker, m.onData));
    let header: Buffer | undefined = Buffer.alloc(0);
    let leader: { readonly pid: number; readonly start: string } | undefined;
    let recorded: number | undefined;
    let closed = false;
    const ended = new Promise<void>((resolve) => {
      stream.on('close', () => {
        closed = true;
        release();
        for (const f of files) f.end();
        if (recorded !== undefined) this.connection.registry?.forget(recorded);
        resolve();
      });
    });
    stream.on('data', (d: Buffer) => {
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
          recorded = this.connection.registry?.record({
            kind: 'remote',
            target: this.connection.target,
            undo: killGroupByPidScript(leader.pid, leader.start),
            label: `tail ${leader.pid} on ${this.connection.host} (${group.map((m) => m.path).join(', ')})`,
          });
        }
        chunk = all.subarray(newline + 1);
      }
      files[0].push(chunk);
    });
    stream.stderr.on('data', (d: Buffer) => {
      files[1]?.push(d);
    });
    const kill = async (): Promise<void> => {
      if (closed) return;
      if (leader !== undefined && !this.connection.closed) {
        await this.shells.run(killGroupByPidScript(leader.pid, leader.start)).catch(() => undefined);
      }
      stream.close();
      await within(ended, STOP_WAIT_MS, undefined);
    };
    let stopped = 0;
    return files.map((file, i) => {
      let stopping: Promise<void> | undefined;
      const stop = async (): Promise<void> => {
        file.stop();
        if (!closed) stream.write(`${i + 1}\n`);
        const inTime = await within(
          file.finished.then(() => true),
          STOP_WAIT_MS,
          false,
        );
        if (!inTime) await kill();
        stopped++;
        if (stopped < files.length || closed) return;
        stream.end();
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

  /** Reads what is appended to `path` over SFTP every `STREAM_POLL_MS` (hosts without GNU tail). */
  private pollStream(path: string, onData: (chunk: Buffer) => void): FileStream {
    let offset = 0;
    let stopped = false;
    let handle: Buffer | undefined;
    const buffer = Buffer.alloc(STREAM_CHUNK_BYTES);
    const drain = async (): Promise<void> => {
      const sftp = await this.connection.sftp();
      if (handle === undefined) {
        handle = await new Promise<Buffer | undefined>((resolve) => {
          sftp.open(path, 'r', (error, h) => {
            resolve(error ? undefined : h);
          });
        });
        if (handle === undefined) return;
      }
      const open = handle;
      for (;;) {
        const n = await new Promise<number>((resolve) => {
          sftp.read(open, buffer, 0, buffer.length, offset, (error, bytesRead) => {
            resolve(error ? 0 : bytesRead);
          });
        });
        if (n <= 0) return;
        offset += n;
        onData(Buffer.from(buffer.subarray(0, n)));
      }
    };
    const loop = (async () => {
      while (!stopped && !this.connection.closed) {
        await drain().catch(() => undefined);
        await sleep(STREAM_POLL_MS);
      }
    })();
    return {
      stop: async () => {
        stopped = true;
        await loop;
        if (this.connection.closed) return;
        await drain().catch(() => undefined);
        const h = handle;
        if (h !== undefined) {
          const sftp = await this.connection.sftp();
          await new Promise<void>((resolve) => {
            sftp.close(h, () => {
              resolve();
            });
          });
        }
      },
    };
  }
}
