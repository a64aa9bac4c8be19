/**
 * Where kvraft touches the world: time, timers, randomness and process output (`NodeEnv`), sockets
 * (`Net`) and files (`DiskFs`). A real node passes Node's (`node-seams.ts`); the simulator passes
 * its own, so the Raft node, its transport, its client connections and its storage format are the
 * same code in both worlds. The modules that take these (see eslint.config.js) may not reach Node's
 * clock, timers, `Math.random`, `node:net` or `node:fs` themselves.
 */

export interface HostPort {
  readonly host: string;
  readonly port: number;
}

/** A pending timer; `cancel` is idempotent. */
export interface Timer {
  cancel(): void;
}

/** Timers in the event loop's order: timers, then I/O, then immediates. */
export interface Timers {
  setTimeout(callback: () => void, delayMs: number): Timer;
  setInterval(callback: () => void, intervalMs: number): Timer;
  /** Runs `callback` after the I/O of this turn of the event loop. */
  setImmediate(callback: () => void): void;
}

export interface NodeEnv extends Timers {
  /** The wall clock (`Date.now()`): what clock faults move. Durations are measured on it, as always. */
  wallMs(): number;
  /** A monotonic clock in ms, untouched by clock faults. */
  monoMs(): number;
  /** Uniform in [0, 1). */
  random(): number;
  /** One stdout line, stamped with the wall clock (ISO 8601). */
  log(line: string): void;
  /** One stdout line as it is. */
  stdout(line: string): void;
  /** One stderr line as it is. */
  stderr(line: string): void;
  /** Ends the node with this exit status; does not return. */
  exit(code: number): never;
}

/** The part of `net.Socket` kvraft uses (the socket's text is UTF-8 throughout). */
export interface NetSocket {
  /** Bytes written and not yet handed to the network (`net.Socket.writableLength`). */
  readonly writableLength: number;
  readonly writable: boolean;
  write(text: string): boolean;
  destroy(): void;
  setNoDelay(noDelay: boolean): void;
  setKeepAlive(enable: boolean, initialDelayMs: number): void;
  /** Calls `onTimeout` after `timeoutMs` without activity; 0 turns it off. */
  setTimeout(timeoutMs: number, onTimeout?: () => void): void;
  setEncoding(encoding: 'utf8'): void;
  on(event: 'connect' | 'drain' | 'close', listener: () => void): void;
  on(event: 'data', listener: (chunk: string) => void): void;
  on(event: 'error', listener: (error: Error) => void): void;
}

/** The part of `net.Server` kvraft uses. */
export interface NetServer {
  readonly listening: boolean;
  listen(port: number, host: string): void;
  close(): void;
  on(event: 'error', listener: (error: Error) => void): void;
  once(event: 'listening', listener: () => void): void;
  once(event: 'error', listener: (error: Error) => void): void;
}

/** TCP as kvraft uses it: dial, and listen with a handler for each connection accepted. */
export interface Net {
  connect(address: HostPort): NetSocket;
  createServer(onConnection: (socket: NetSocket) => void): NetServer;
}

/**
 * The synchronous file calls of kvraft's storage, plus the directory fsync that makes a create or
 * a rename durable. Errors are thrown as Node's are (`code`: EIO, ENOSPC, ENOENT, …).
 */
export interface DiskFs {
  mkdirp(dir: string): void;
  exists(path: string): boolean;
  readFile(path: string): Buffer;
  /** `a`: append, created if missing; `w`: truncated or created. Returns a descriptor. */
  open(path: string, flags: 'a' | 'w'): number;
  write(fd: number, text: string): void;
  fsync(fd: number): void;
  ftruncate(fd: number, length: number): void;
  close(fd: number): void;
  rename(from: string, to: string): void;
  fsyncDir(dir: string): void;
}

/** Everything a node takes from its world. */
export interface NodeIo {
  readonly env: NodeEnv;
  readonly net: Net;
  readonly fs: DiskFs;
}
