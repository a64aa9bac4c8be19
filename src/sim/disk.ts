import path from 'node:path';

import type { Rng } from '../core/random.js';
import type { DiskFs } from '../systems/kvraft/seams.js';
import type { HostedProcess } from './scheduler.js';

/**
 * What a disk promises about writes when the power fails:
 * - `C1`: a completed write is durable at once (an in-memory mock: stronger than any real disk);
 * - `C2`: data is durable only at fsync, and a crash drops what was written since; a file created
 *   is durable once it or its directory has been fsynced (until then a crash removes it, under
 *   whatever name it has); renames are durable at once. The FUSE disk layer's rule, exactly (an
 *   e2e test plays random traces on both);
 * - `C3`: as C2, and each unsynced write may persist wholly, in part (whole sectors) or not at all;
 *   creates and renames are durable only once their directory is fsynced (all POSIX promises).
 */
export type StorageContract = 'C1' | 'C2' | 'C3';

/** The granularity at which a C3 crash tears a write. */
const SECTOR_BYTES = 512;

/** Growable file contents. */
class Bytes {
  private buf = Buffer.alloc(0);
  length = 0;

  writeAt(offset: number, data: Buffer): void {
    const end = offset + data.length;
    if (end > this.buf.length) {
      const grown = Buffer.alloc(Math.max(end, this.buf.length * 2, 256));
      this.buf.copy(grown, 0, 0, this.length);
      this.buf = grown;
    }
    if (offset > this.length) this.buf.fill(0, this.length, offset);
    data.copy(this.buf, offset);
    this.length = Math.max(this.length, end);
  }

  truncate(length: number): void {
    if (length > this.length) this.writeAt(length, Buffer.alloc(0));
    this.length = length;
  }

  copy(): Bytes {
    const out = new Bytes();
    out.writeAt(0, this.buf.subarray(0, this.length));
    return out;
  }

  read(): Buffer {
    return Buffer.from(this.buf.subarray(0, this.length));
  }
}

type Pending =
  | { readonly kind: 'write'; readonly offset: number; readonly data: Buffer }
  | {
      readonly kind: 'truncate';
      readonly length: number;
    };

class Inode {
  visible = new Bytes();
  durable = new Bytes();
  pending: Pending[] = [];
  /** C2: created, and neither it nor its directory fsynced since: a crash removes it. */
  created = false;
}

interface OpenFile {
  readonly inode: Inode;
  readonly append: boolean;
  position: number;
  readonly owner: HostedProcess;
}

/** A coded error as Node's fs throws it. */
function fsError(code: string, syscall: string, file: string): Error {
  return Object.assign(new Error(`${code}: simulated disk, ${syscall} '${file}'`), {
    code,
    syscall,
    path: file,
  });
}

/** An injected disk fault: this operation fails with this code until healed. */
export interface DiskFault {
  readonly op: 'write' | 'fsync';
  readonly code: 'EIO' | 'ENOSPC';
}

/**
 * One host's simulated disk: a page cache (what reads see) over a durable image, per file, with
 * the writes pending since the last fsync; names bound in the page cache and durably. A process's
 * death keeps the page cache (`crash` is the power loss).
 */
export class SimDisk {
  private readonly visibleNames = new Map<string, Inode>();
  private durableNames = new Map<string, Inode>();
  private readonly dirs = new Set<string>();
  private readonly files = new Map<number, OpenFile>();
  private nextFd = 3;
  fault: DiskFault | undefined;

  constructor(
    readonly contract: StorageContract,
    private readonly rng: Rng,
  ) {}

  /** The calls a process makes; its descriptors close when it ends. */
  fsFor(process: HostedProcess): DiskFs {
    process.onEnd.push(() => {
      for (const [fd, file] of this.files) if (file.owner === process) this.files.delete(fd);
    });
    return {
      mkdirp: (dir) => {
        for (let d = path.resolve(dir); !this.dirs.has(d); d = path.dirname(d)) this.dirs.add(d);
      },
      exists: (file) => this.visibleNames.has(path.resolve(file)) || this.dirs.has(path.resolve(file)),
      readFile: (file) => {
        const inode = this.visibleNames.get(path.resolve(file));
        if (!inode) throw fsError('ENOENT', 'open', file);
        return inode.visible.read();
      },
      open: (file, flags) => {
        const name = path.resolve(file);
        if (!this.dirs.has(path.dirname(name))) throw fsError('ENOENT', 'open', file);
        let inode = this.visibleNames.get(name);
        if (!inode) {
          inode = new Inode();
          inode.created = this.contract === 'C2';
          this.bind(name, inode);
        } else if (flags === 'w') this.apply(inode, { kind: 'truncate', length: 0 });
        const fd = this.nextFd++;
        this.files.set(fd, { inode, append: flags === 'a', position: 0, owner: process });
        return fd;
      },
      write: (fd, text) => {
        const file = this.file(fd, 'write');
        if (this.fault?.op === 'write') throw fsError(this.fault.code, 'write', `fd ${fd}`);
        const data = Buffer.from(text, 'utf8');
        const offset = file.append ? file.inode.visible.length : file.position;
        this.apply(file.inode, { kind: 'write', offset, data });
        file.position = offset + data.length;
      },
      fsync: (fd) => {
        const file = this.file(fd, 'fsync');
        if (this.fault?.op === 'fsync') throw fsError(this.fault.code, 'fsync', `fd ${fd}`);
        this.sync(file.inode);
      },
      ftruncate: (fd, length) => {
        this.apply(this.file(fd, 'ftruncate').inode, { kind: 'truncate', length });
      },
      close: (fd) => {
        this.file(fd, 'close');
        this.files.delete(fd);
      },
      rename: (from, to) => {
        const source = path.resolve(from);
        const inode = this.visibleNames.get(source);
        if (!inode) throw fsError('ENOENT', 'rename', from);
        this.visibleNames.delete(source);
        if (this.contract !== 'C3') this.durableNames.delete(source);
        this.bind(path.resolve(to), inode);
      },
      fsyncDir: (dir) => {
        if (this.fault?.op === 'fsync') throw fsError(this.fault.code, 'fsync', dir);
        const name = path.resolve(dir);
        for (const file of [...this.durableNames.keys()]) {
          if (path.dirname(file) === name && !this.visibleNames.has(file)) this.durableNames.delete(file);
        }
        for (const [file, inode] of this.visibleNames) {
          if (path.dirname(file) !== name) continue;
          this.durableNames.set(file, inode);
          inode.created = false;
        }
      },
    };
  }

  /**
   * The power fails: every file is what its contract leaves of it (C1: everything; C2: what was
   * fsynced; C3: that, plus some of the unsynced writes, torn at sector boundaries), every name what
   * was made durable. Open descriptors are gone.
   */
  crash(): void {
    this.files.clear();
    this.visibleNames.clear();
    for (const [name, inode] of this.durableNames) {
      if (inode.created) {
        this.durableNames.delete(name);
        continue;
      }
      if (this.contract === 'C3') this.persistSome(inode);
      inode.pending = [];
      inode.visible = inode.durable.copy();
      this.visibleNames.set(name, inode);
    }
  }

  /** What a file holds now (the page cache), or undefined; for tests and checks. */
  contents(file: string): Buffer | undefined {
    return this.visibleNames.get(path.resolve(file))?.visible.read();
  }

  private file(fd: number, syscall: string): OpenFile {
    const file = this.files.get(fd);
    if (!file) throw fsError('EBADF', syscall, `fd ${fd}`);
    return file;
  }

  private bind(name: string, inode: Inode): void {
    this.visibleNames.set(name, inode);
    if (this.contract !== 'C3') this.durableNames.set(name, inode);
  }

  private apply(inode: Inode, op: Pending): void {
    applyTo(inode.visible, op);
    if (this.contract === 'C1') applyTo(inode.durable, op);
    else inode.pending.push(op);
  }

  private sync(inode: Inode): void {
    for (const op of inode.pending) applyTo(inode.durable, op);
    inode.pending = [];
    inode.created = false;
  }

  /** C3: each unsynced write persists wholly, in part (some of its sectors) or not at all. */
  private persistSome(inode: Inode): void {
    for (const op of inode.pending) {
      const fate = this.rng.int(3);
      if (fate === 0) continue;
      if (op.kind === 'truncate' || fate === 1) {
        applyTo(inode.durable, op);
        continue;
      }
      let start = op.offset;
      const end = op.offset + op.data.length;
      while (start < end) {
        const next = Math.min(end, (Math.floor(start / SECTOR_BYTES) + 1) * SECTOR_BYTES);
        if (this.rng.chance(0.5)) {
          inode.durable.writeAt(start, op.data.subarray(start - op.offset, next - op.offset));
        }
        start = next;
      }
    }
  }
}

function applyTo(bytes: Bytes, op: Pending): void {
  if (op.kind === 'write') bytes.writeAt(op.offset, op.data);
  else bytes.truncate(op.length);
}
