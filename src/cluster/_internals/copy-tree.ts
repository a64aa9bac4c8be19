import {
  closeSync,
  constants,
  copyFileSync,
  ftruncateSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  readSync,
  symlinkSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';

/** Files from this size on are copied block by block, leaving their zero blocks as holes. */
const SPARSE_FROM_BYTES = 1024 ** 2;
const BLOCK_BYTES = 256 * 1024;
const ZEROS = Buffer.alloc(BLOCK_BYTES);

/**
 * Copies a directory tree (files, dirs, symlinks; sockets and FIFOs are skipped: nothing restarts
 * from them). Small files are cloned copy-on-write where the filesystem can (`FICLONE`, else
 * copied); large ones are copied with their zero blocks left as holes, as systems preallocate
 * (etcd's 64 MiB WAL segments are mostly zeros). Returns the bytes written: the files' data
 * without those holes.
 */
export function copyTree(from: string, to: string): number {
  mkdirSync(to, { recursive: true });
  let bytes = 0;
  for (const entry of readdirSync(from)) {
    const source = join(from, entry);
    const target = join(to, entry);
    const stat = lstatSync(source);
    if (stat.isDirectory()) bytes += copyTree(source, target);
    else if (stat.isSymbolicLink()) symlinkSync(readlinkSync(source), target);
    else if (stat.isFile()) {
      if (stat.size >= SPARSE_FROM_BYTES) bytes += copySparse(source, target, stat.size);
      else {
        copyFileSync(source, target, constants.COPYFILE_FICLONE);
        bytes += stat.size;
      }
    }
  }
  return bytes;
}

/** Copies a file block by block, seeking over blocks of zeros; returns the bytes written. */
function copySparse(source: string, target: string, size: number): number {
  const from = openSync(source, 'r');
  let to: number | undefined;
  try {
    to = openSync(target, 'w');
    const block = Buffer.allocUnsafe(BLOCK_BYTES);
    let written = 0;
    for (let at = 0; at < size;) {
      const n = readSync(from, block, 0, BLOCK_BYTES, at);
      if (n === 0) break;
      const chunk = block.subarray(0, n);
      if (!chunk.equals(ZEROS.subarray(0, n))) {
        writeSync(to, chunk, 0, n, at);
        written += n;
      }
      at += n;
    }
    ftruncateSync(to, size);
    return written;
  } finally {
    closeSync(from);
    if (to !== undefined) closeSync(to);
  }
}

/** `st_blocks` counts 512-byte units whatever the filesystem's block size. */
const STAT_BLOCK_BYTES = 512;

/**
 * The bytes the files under `dir` hold on disk, at most their sizes: a sparse file's holes do not
 * count. 0 when `dir` is missing.
 */
export function storedBytes(dir: string): number {
  let entries: string[];
  try {
    entries = readdirSync(dir);
  } catch {
    return 0;
  }
  let bytes = 0;
  for (const entry of entries) {
    const path = join(dir, entry);
    const stat = lstatSync(path);
    if (stat.isDirectory()) bytes += storedBytes(path);
    else if (stat.isFile()) bytes += Math.min(stat.size, stat.blocks * STAT_BLOCK_BYTES);
  }
  return bytes;
}

/** Text files up to this size are searched for a path to move; larger ones are data. */
const RELOCATE_MAX_BYTES = 1024 ** 2;

/**
 * Replaces `from` with `to` in every text file under `dir` (no NUL byte, at most 1 MiB): a copied
 * data dir whose config names where it was (Redis's `dir`) names where it is. Returns the files
 * changed. Binary files are left alone: their lengths and offsets would break.
 */
export function relocateText(dir: string, from: string, to: string): number {
  let changed = 0;
  const needle = Buffer.from(from);
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry);
    const stat = lstatSync(path);
    if (stat.isDirectory()) changed += relocateText(path, from, to);
    else if (stat.isFile() && stat.size <= RELOCATE_MAX_BYTES) {
      const bytes = readFileSync(path);
      if (bytes.includes(0) || !bytes.includes(needle)) continue;
      writeFileSync(path, bytes.toString('utf8').split(from).join(to));
      changed++;
    }
  }
  return changed;
}
