import path from 'node:path';

import type { Entry, Snapshot } from './messages.js';
import type { DiskFs, Timer, Timers } from '../seams.js';

export interface Meta {
  readonly term: number;
  readonly votedFor: string | null;
}

export interface Loaded {
  readonly meta: Meta;
  readonly snapshot: Snapshot | undefined;
  /** Entries after the snapshot, contiguous. */
  readonly entries: readonly Entry[];
  /**
   * Bytes cut off the log's end because they held no usable entry: a record a crash tore (no
   * newline, or not JSON), and whatever followed a torn record or a gap. 0 when the log was whole.
   */
  readonly cutBytes: number;
}

const META = 'meta.json';
const LOG = 'log.jsonl';
const SNAPSHOT = 'snapshot.json';

/** What storage takes from its world: the file calls, and a timer for `deferFsyncMs`. */
export interface StorageIo {
  readonly fs: DiskFs;
  readonly timers: Timers;
}

export interface StorageOptions {
  /**
   * The `ack-before-fsync` bug: `append` returns once the entries are written, and the log is
   * fsynced this many ms later — so the node acknowledges entries a crash can still take away.
   */
  readonly deferFsyncMs?: number;
  /**
   * The `rename-without-dir-fsync` bug: a replacement (write, fsync, rename) never fsyncs the
   * directory, so under storage that keeps names only at a directory fsync the new names are lost
   * at a power loss, and so is the log file's own creation.
   */
  readonly skipDirFsync?: boolean;
  /**
   * Called when the disk refuses a write or an fsync (EIO, ENOSPC, …): the state can no longer be
   * made durable, so the node must stop rather than go on (it must not exit through an uncaught
   * exception, which reads as a crash). Default: the error is thrown.
   */
  readonly onFailure?: (what: string, error: Error) => never;
}

/**
 * A node's durable state: `meta.json` (term and vote, replaced by write-then-rename), `log.jsonl`
 * (one entry per line, appended and fsynced; rewritten by write-then-rename on truncation and
 * compaction) and `snapshot.json` (write-then-rename). Every method returns once the data is on
 * disk (but see `deferFsyncMs`), or does not return (see `onFailure`). Loading cuts a torn tail
 * off the log, so entries appended after it are not glued to it and lost at the next start.
 */
export class Storage {
  private logFd: number;
  private deferredFsync: Timer | undefined;
  private readonly fs: DiskFs;

  constructor(
    private readonly io: StorageIo,
    private readonly dir: string,
    private readonly options: StorageOptions = {},
  ) {
    this.fs = io.fs;
    this.fs.mkdirp(dir);
    this.logFd = this.fs.open(path.join(dir, LOG), 'a');
  }

  load(): Loaded {
    const metaPath = path.join(this.dir, META);
    const meta: Meta = this.fs.exists(metaPath)
      ? (JSON.parse(this.fs.readFile(metaPath).toString('utf8')) as Meta)
      : { term: 0, votedFor: null };
    const snapPath = path.join(this.dir, SNAPSHOT);
    const snapshot = this.fs.exists(snapPath)
      ? (JSON.parse(this.fs.readFile(snapPath).toString('utf8')) as Snapshot)
      : undefined;
    const after = snapshot?.lastIndex ?? 0;
    const entries: Entry[] = [];
    const log = this.fs.readFile(path.join(this.dir, LOG));
    let usable = 0;
    while (usable < log.length) {
      const end = log.indexOf(0x0a, usable);
      // A record without its newline was torn by a crash mid-append: it was never fsynced whole,
      // so never counted as stored.
      if (end < 0) break;
      let entry: Entry;
      try {
        entry = JSON.parse(log.toString('utf8', usable, end)) as Entry;
      } catch {
        break; // torn in the middle (a later append's bytes after it): never acknowledged either
      }
      if (entry.index > after) {
        if (entry.index !== after + entries.length + 1) break; // a gap: nothing after it is usable
        entries.push(entry);
      }
      usable = end + 1;
    }
    const cutBytes = log.length - usable;
    if (cutBytes > 0)
      this.guard('cut the log', () => {
        this.fs.ftruncate(this.logFd, usable);
        this.fs.fsync(this.logFd);
      });
    return { meta, snapshot, entries, cutBytes };
  }

  saveMeta(meta: Meta): void {
    this.guard(`save ${META}`, () => {
      this.replace(META, JSON.stringify(meta));
    });
  }

  append(entries: readonly Entry[]): void {
    if (entries.length === 0) return;
    this.guard(`append to ${LOG}`, () => {
      this.fs.write(this.logFd, entries.map((e) => JSON.stringify(e) + '\n').join(''));
    });
    const delayMs = this.options.deferFsyncMs;
    if (delayMs === undefined) this.fsyncLog();
    else
      this.deferredFsync ??= this.io.timers.setTimeout(() => {
        this.deferredFsync = undefined;
        this.fsyncLog();
      }, delayMs);
  }

  /** Replaces the whole log file (after truncation or compaction). */
  rewriteLog(entries: readonly Entry[]): void {
    this.cancelDeferredFsync();
    this.guard(`rewrite ${LOG}`, () => {
      this.fs.close(this.logFd);
      this.replace(LOG, entries.map((e) => JSON.stringify(e) + '\n').join(''));
      this.logFd = this.fs.open(path.join(this.dir, LOG), 'a');
    });
  }

  saveSnapshot(snapshot: Snapshot): void {
    this.guard(`save ${SNAPSHOT}`, () => {
      this.replace(SNAPSHOT, JSON.stringify(snapshot));
    });
  }

  close(): void {
    this.cancelDeferredFsync();
    this.fs.close(this.logFd);
  }

  private fsyncLog(): void {
    this.guard(`fsync ${LOG}`, () => {
      this.fs.fsync(this.logFd);
    });
  }

  /** Runs a disk operation; a failure goes to `onFailure` (the node stops) when there is one. */
  private guard(what: string, operation: () => void): void {
    try {
      operation();
    } catch (error) {
      if (!this.options.onFailure || !(error instanceof Error)) throw error;
      this.options.onFailure(what, error);
    }
  }

  private cancelDeferredFsync(): void {
    this.deferredFsync?.cancel();
    this.deferredFsync = undefined;
  }

  private replace(name: string, text: string): void {
    const target = path.join(this.dir, name);
    const tmp = target + '.tmp';
    const fd = this.fs.open(tmp, 'w');
    this.fs.write(fd, text);
    this.fs.fsync(fd);
    this.fs.close(fd);
    this.fs.rename(tmp, target);
    if (this.options.skipDirFsync !== true) this.fs.fsyncDir(this.dir);
  }
}
