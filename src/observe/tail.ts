import { type FSWatcher, watch } from 'node:fs';
import { type FileHandle, open } from 'node:fs/promises';

import { monoNs } from '../core/clock.js';

/**
 * Follows a growing file (a node's output log, a probe JSONL file) from an offset and hands over
 * each complete line with the host time (ns) at which it was read. Reads are triggered by
 * `fs.watch` (low latency) and by a poll every `pollMs` (watch events can be missed or
 * unsupported). The file may not exist yet; a truncated file is read again from the start.
 *
 * Usage:
 * ```ts
 * const tail = new FileTail(path, (line, ts) => timeline.ingest(...));
 * tail.start();
 * // ... at the end of the run:
 * await tail.stop(); // reads what is left, emits a final unterminated line, closes everything
 * ```
 */
export interface FileTailOptions {
  /** Byte offset to start from (default 0; `tail.offset` of an earlier tail resumes it). */
  readonly offset?: number;
  readonly pollMs?: number;
  /** Called when reading fails for another reason than the file not existing yet. */
  readonly onError?: (error: Error) => void;
}

export const TAIL_POLL_MS = 50;
const READ_CHUNK_BYTES = 64 * 1024;
const NEWLINE = 0x0a;

export class FileTail {
  private position: number;
  private readonly pollMs: number;
  private handle: FileHandle | undefined;
  private watcher: FSWatcher | undefined;
  private timer: NodeJS.Timeout | undefined;
  private pending: Buffer = Buffer.alloc(0);
  private reading: Promise<void> | undefined;
  private again = false;
  private stopped = false;
  private readonly buf = Buffer.alloc(READ_CHUNK_BYTES);

  constructor(
    readonly path: string,
    private readonly onLine: (line: string, ts: number) => void,
    private readonly options: FileTailOptions = {},
  ) {
    this.position = options.offset ?? 0;
    this.pollMs = options.pollMs ?? TAIL_POLL_MS;
  }

  /** Bytes consumed so far (up to the end of the last complete line handed over). */
  get offset(): number {
    return this.position - this.pending.length;
  }

  start(): void {
    if (this.timer || this.stopped) return;
    this.timer = setInterval(() => {
      this.kick();
    }, this.pollMs);
    this.kick();
  }

  /** Reads what is left, emits a trailing unterminated line (when `flush`), releases everything. */
  async stop(flush = true): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    clearInterval(this.timer);
    this.watcher?.close();
    this.watcher = undefined;
    while (this.reading) await this.reading;
    if (this.handle) {
      try {
        await this.readAvailable();
      } catch (error) {
        this.report(error);
      }
    }
    if (flush && this.pending.length > 0) {
      const rest = this.pending.toString('utf8');
      this.pending = Buffer.alloc(0);
      this.onLine(rest.endsWith('\r') ? rest.slice(0, -1) : rest, monoNs());
    }
    await this.handle?.close();
    this.handle = undefined;
  }

  private kick(): void {
    if (this.stopped && !this.reading) return;
    if (this.reading) {
      this.again = true;
      return;
    }
    this.reading = this.drain().finally(() => {
      this.reading = undefined;
    });
  }

  private async drain(): Promise<void> {
    do {
      this.again = false;
      try {
        if (!this.handle && !(await this.openFile())) return;
        await this.readAvailable();
      } catch (error) {
        this.report(error);
        return;
      }
    } while (this.again && !this.stopped);
  }

  private async openFile(): Promise<boolean> {
    try {
      this.handle = await open(this.path, 'r');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
      throw error;
    }
    if (this.stopped) return true;
    try {
      this.watcher = watch(this.path, () => {
        this.kick();
      });
      this.watcher.on('error', () => {
        // Polling still reads the file; a watcher error (file removed) is not fatal.
        this.watcher?.close();
        this.watcher = undefined;
      });
    } catch {
      this.watcher = undefined;
    }
    return true;
  }

  private async readAvailable(): Promise<void> {
    const handle = this.handle;
    if (!handle) return;
    const { size } = await handle.stat();
    if (size < this.position) {
      this.position = 0;
      this.pending = Buffer.alloc(0);
    }
    for (;;) {
      const { bytesRead } = await handle.read(this.buf, 0, READ_CHUNK_BYTES, this.position);
      if (bytesRead === 0) return;
      this.position += bytesRead;
      this.consume(this.buf.subarray(0, bytesRead));
      if (bytesRead < READ_CHUNK_BYTES) return;
    }
  }

  private consume(chunk: Buffer): void {
    const ts = monoNs();
    let data = this.pending.length > 0 ? Buffer.concat([this.pending, chunk]) : chunk;
    let start = 0;
    for (;;) {
      const nl = data.indexOf(NEWLINE, start);
      if (nl < 0) break;
      const end = nl > start && data[nl - 1] === 0x0d ? nl - 1 : nl;
      this.onLine(data.toString('utf8', start, end), ts);
      start = nl + 1;
    }
    data = data.subarray(start);
    // Copy: `chunk` is the reused read buffer.
    this.pending = Buffer.from(data);
  }

  private report(error: unknown): void {
    const err = error instanceof Error ? error : new Error(String(error));
    this.options.onError?.(err);
  }
}
