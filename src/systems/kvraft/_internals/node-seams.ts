import {
  closeSync,
  existsSync,
  fsyncSync,
  ftruncateSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  writeSync,
} from 'node:fs';
import net from 'node:net';
import { performance } from 'node:perf_hooks';

import type { DiskFs, Net, NetServer, NetSocket, NodeEnv, NodeIo, Timer } from '../seams.js';

const timer = (handle: NodeJS.Timeout): Timer => ({
  cancel() {
    clearTimeout(handle);
  },
});

/** Node's clocks, timers, randomness and this process's output and exit. */
export const nodeEnv: NodeEnv = {
  wallMs: () => Date.now(),
  monoMs: () => performance.now(),
  setTimeout: (callback, delayMs) => timer(setTimeout(callback, delayMs)),
  setInterval: (callback, intervalMs) => timer(setInterval(callback, intervalMs)),
  setImmediate(callback) {
    setImmediate(callback);
  },
  random: () => Math.random(),
  log(line) {
    process.stdout.write(`${new Date().toISOString()} ${line}\n`);
  },
  stdout(line) {
    process.stdout.write(`${line}\n`);
  },
  stderr(line) {
    process.stderr.write(`${line}\n`);
  },
  exit: (code) => process.exit(code),
};

/** Node's TCP. */
export const nodeNet: Net = {
  connect: (address): NetSocket => net.connect({ host: address.host, port: address.port }),
  createServer: (onConnection): NetServer => net.createServer(onConnection),
};

/** Node's synchronous file calls. */
export const nodeDiskFs: DiskFs = {
  mkdirp(dir) {
    mkdirSync(dir, { recursive: true });
  },
  exists: (path) => existsSync(path),
  readFile: (path) => readFileSync(path),
  open: (path, flags) => openSync(path, flags),
  write(fd, text) {
    writeSync(fd, text);
  },
  fsync(fd) {
    fsyncSync(fd);
  },
  ftruncate(fd, length) {
    ftruncateSync(fd, length);
  },
  close(fd) {
    closeSync(fd);
  },
  rename(from, to) {
    renameSync(from, to);
  },
  fsyncDir(dir) {
    const fd = openSync(dir, 'r');
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  },
};

/** What a real node process takes from its world: Node's own. */
export const nodeIo: NodeIo = { env: nodeEnv, net: nodeNet, fs: nodeDiskFs };
