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

/** How a torn crash cuts a file's last unsynced write: whole sectors, or inside one. */
export type TornCut = 'sector' | 'byte';

/** A crash that tears each file's last unsynced write at a point its seed and path decide. */
export interface Tear {
  readonly seed: number;
  readonly cut: TornCut;
  /**
   * The dir the FUSE layer would be mounted on (the node's data dir): the cut hashes a file's path
   * relative to it, as the layer does, so one seed cuts a file where the layer would.
   */
  readonly root?: string;
}

const FNV64_OFFSET = 0xcbf29ce484222325n;
const FNV64_PRIME = 0x100000001b3n;
const U64 = 0xffffffffffffffffn;

/**
 * The FUSE layer's documented cut hash: 64-bit FNV-1a over the seed's decimal digits, a NUL and
 * the file's path (relative to the mount), so a seed tears a file here exactly as it does there.
 */
function cutHash(seed: number, file: string): bigint {
  let h = FNV64_OFFSET;
  for (const byte of Buffer.from(`${seed}\0${file}`)) h = ((h ^ BigInt(byte)) * FNV64_PRIME) & U64;
  return h;
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
  /** The injected faults in force (fsync answering EIO, writes answering ENOSPC: either or both). */
  faults: DiskFault[] = [];

  /** One injected fault, or none: what `faults` holds when a single one is set. */
  get fault(): DiskFault | undefined {
    return this.faults[0];
  }

  set fault(fault: DiskFault | undefined) {
    this.faults = fault ? [fault] : [];
  }

  private failing(op: DiskFault['op']): DiskFault | undefined {
    return this.faults.find((f) => f.op === op);
  }

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
        const failed = this.failing('write');
        if (failed) throw fsError(failed.code, 'write', `fd ${fd}`);
        const data = Buffer.from(text, 'utf8');
        const offset = file.append ? file.inode.visible.length : file.position;
        this.apply(file.inode, { kind: 'write', offset, data });
        file.position = offset + data.length;
      },
      fsync: (fd) => {
        const file = this.file(fd, 'fsync');
        const failed = this.failing('fsync');
        if (failed) throw fsError(failed.code, 'fsync', `fd ${fd}`);
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
        const failed = this.failing('fsync');
        if (failed) throw fsError(failed.code, 'fsync', dir);
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
  crash(tear?: Tear): void {
    this.files.clear();
    this.visibleNames.clear();
    for (const [name, inode] of this.durableNames) {
      if (inode.created) {
        this.durableNames.delete(name);
        continue;
      }
      const last = tear ? lastWrite(inode.pending) : undefined;
      const page = last !== undefined && last.length > 0 ? inode.visible.read() : undefined;
      if (this.contract === 'C3') this.persistSome(inode);
      if (tear && last !== undefined && page) this.tearLast(inode, last, page, tear, name);
      inode.pending = [];
      inode.visible = inode.durable.copy();
      this.visibleNames.set(name, inode);
    }
  }

  /**
   * A torn crash (the disk fault `torn-write`): on top of what the contract keeps, a prefix of the
   * file's last unsynced write is written back at its offset. `sector`: up to a sector boundary
   * strictly inside the write (none: nothing), its first sector whole as the page cache held it;
   * `byte`: a strict, non-empty prefix that does not end on a sector boundary. Under C1 nothing is
   * unsynced, so nothing tears.
   */
  private tearLast(inode: Inode, last: WriteSpan, page: Buffer, tear: Tear, name: string): void {
    const { offset } = last;
    const data = { length: last.length };
    const h = cutHash(tear.seed, tear.root === undefined ? name : path.relative(tear.root, name));
    let from = offset;
    let to = offset;
    if (tear.cut === 'byte') {
      if (data.length > 1) {
        let keep = 1 + Number(h % BigInt(data.length - 1));
        if (keep % SECTOR_BYTES === 0) keep--;
        to = offset + keep;
      }
    } else {
      const first = (Math.floor(offset / SECTOR_BYTES) + 1) * SECTOR_BYTES;
      const end = offset + data.length;
      if (first < end) {
        const boundaries = Math.floor((end - 1 - first) / SECTOR_BYTES) + 1;
        to = first + Number(h % BigInt(boundaries)) * SECTOR_BYTES;
        from = Math.floor(offset / SECTOR_BYTES) * SECTOR_BYTES;
      }
    }
    if (to > from) inode.durable.writeAt(from, page.subarray(from, Math.min(to, page.length)));
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

/** Where a file's last unsynced write lies. */
interface WriteSpan {
  readonly offset: number;
  readonly length: number;
}

/** The page size the kernel splits a large write at (the FUSE layer joins such pieces again). */
const PAGE_BYTES = 4096;

/**
 * A file's last unsynced write as the FUSE layer keeps it: a write that continues the previous one
 * at a page boundary is its continuation (a write the kernel sent in pieces), and a truncation
 * since cuts off what lay past the new size (nothing left: no last write).
 */
function lastWrite(pending: readonly Pending[]): WriteSpan | undefined {
  let last: WriteSpan | undefined;
  for (const op of pending) {
    if (op.kind === 'write') {
      const continues =
        last !== undefined &&
        last.length > 0 &&
        last.offset + last.length === op.offset &&
        op.offset % PAGE_BYTES === 0;
      last = continues
        ? { offset: last!.offset, length: last!.length + op.data.length }
        : { offset: op.offset, length: op.data.length };
    } else if (last !== undefined && last.offset + last.length > op.length) {
      last = { offset: last.offset, length: Math.max(0, op.length - last.offset) };
    }
  }
  return last;
}

function applyTo(bytes: Bytes, op: Pending): void {
  if (op.kind === 'write') bytes.writeAt(op.offset, op.data);
  else bytes.truncate(op.length);
}
