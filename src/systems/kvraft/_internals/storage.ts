import {
  closeSync,
  existsSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  writeSync,
} from 'node:fs';
import path from 'node:path';

import type { Entry, Snapshot } from './messages.js';

export interface Meta {
  readonly term: number;
  readonly votedFor: string | null;
}

export interface Loaded {
  readonly meta: Meta;
  readonly snapshot: Snapshot | undefined;
  /** Entries after the snapshot, contiguous. */
  readonly entries: readonly Entry[];
}

const META = 'meta.json';
const LOG = 'log.jsonl';
const SNAPSHOT = 'snapshot.json';

export interface StorageOptions {
  /**
   * The `ack-before-fsync` bug: `append` returns once the entries are written, and the log is
   * fsynced this many ms later — so the node acknowledges entries a crash can still take away.
   */
  readonly deferFsyncMs?: number;
}

/**
 * A node's durable state: `meta.json` (term and vote, replaced by write-then-rename), `log.jsonl`
 * (one entry per line, appended and fsynced; rewritten by write-then-rename on truncation and
 * compaction) and `snapshot.json` (write-then-rename). Every method returns once the data is on
 * disk (but see `deferFsyncMs`).
 */
export class Storage {
  private logFd: number;
  private deferredFsync: NodeJS.Timeout | undefined;

  constructor(
    private readonly dir: string,
    private readonly options: StorageOptions = {},
  ) {
    mkdirSync(dir, { recursive: true });
    this.logFd = openSync(path.join(dir, LOG), 'a');
  }

  load(): Loaded {
    const metaPath = path.join(this.dir, META);
    const meta: Meta = existsSync(metaPath)
      ? (JSON.parse(readFileSync(metaPath, 'utf8')) as Meta)
      : { term: 0, votedFor: null };
    const snapPath = path.join(this.dir, SNAPSHOT);
    const snapshot = existsSync(snapPath)
      ? (JSON.parse(readFileSync(snapPath, 'utf8')) as Snapshot)
      : undefined;
    const after = snapshot?.lastIndex ?? 0;
    const entries: Entry[] = [];
    for (const line of readFileSync(path.join(this.dir, LOG), 'utf8').split('\n')) {
      if (line.length === 0) continue;
      let entry: Entry;
      try {
        entry = JSON.parse(line) as Entry;
      } catch {
        break; // a torn last line from a crash mid-append: it was never acknowledged
      }
      if (entry.index <= after) continue;
      if (entry.index !== after + entries.length + 1) break; // a gap: nothing after it is usable
      entries.push(entry);
    }
    return { meta, snapshot, entries };
  }

  saveMeta(meta: Meta): void {
    this.replace(META, JSON.stringify(meta));
  }

  append(entries: readonly Entry[]): void {
    if (entries.length === 0) return;
    writeSync(this.logFd, entries.map((e) => JSON.stringify(e) + '\n').join(''));
    const delayMs = this.options.deferFsyncMs;
    if (delayMs === undefined) fsyncSync(this.logFd);
    else
      this.deferredFsync ??= setTimeout(() => {
        this.deferredFsync = undefined;
        fsyncSync(this.logFd);
      }, delayMs);
  }

  /** Replaces the whole log file (after truncation or compaction). */
  rewriteLog(entries: readonly Entry[]): void {
    this.cancelDeferredFsync();
    closeSync(this.logFd);
    this.replace(LOG, entries.map((e) => JSON.stringify(e) + '\n').join(''));
    this.logFd = openSync(path.join(this.dir, LOG), 'a');
  }

  saveSnapshot(snapshot: Snapshot): void {
    this.replace(SNAPSHOT, JSON.stringify(snapshot));
  }

  close(): void {
    this.cancelDeferredFsync();
    closeSync(this.logFd);
  }

  private cancelDeferredFsync(): void {
    clearTimeout(this.deferredFsync);
    this.deferredFsync = undefined;
  }

  private replace(name: string, text: string): void {
    const target = path.join(this.dir, name);
    const tmp = target + '.tmp';
    const fd = openSync(tmp, 'w');
    writeSync(fd, text);
    fsyncSync(fd);
    closeSync(fd);
    renameSync(tmp, target);
    const dirFd = openSync(this.dir, 'r');
    fsyncSync(dirFd);
    closeSync(dirFd);
  }
}
