import type { ResourceRegistry } from '../resources.js';
import type { RuntimePlace } from './undo-on.js';

/** How a process a runtime started ended. */
export interface ProcessEnd {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

/** What to start: argv, its environment additions, where it runs and where its output goes (paths on the runtime's host). */
export interface StartSpec {
  readonly argv: readonly string[];
  /** Variables added to the environment the runtime gives its processes. */
  readonly env: Readonly<Record<string, string>>;
  readonly cwd: string;
  /** Appended to (created when missing). */
  readonly stdout: string;
  readonly stderr: string;
  /** Names the process in the run's registry (`n1: node`). */
  readonly label: string;
}

/** A process a runtime started, the leader of its own process group. */
export interface RuntimeProcess {
  readonly pid: number;
  /** The id of its process group (its own pid: it leads the group). */
  readonly pgid: number;
  /** The run registry's entry for it (forgotten by the runtime once it has ended). */
  readonly resourceId: number;
  /** Resolves when the process (the group's leader) has ended. */
  readonly exited: Promise<ProcessEnd>;
}

/** How `NodeRuntime.exec` runs a command. */
export interface ExecOptions {
  /** Ended (as a failure) past this; a command with `signal` has none unless given one. */
  readonly timeoutMs?: number;
  /**
   * The command's stdin (EOF after it); a stream is written to it as it comes, EOF when the stream
   * ends. Absent, its stdin is empty or left open.
   */
  readonly input?: string | Buffer | NodeJS.ReadableStream;
  /** Given, stdout is handed over as it arrives (binary-safe), not kept for the result. */
  readonly onStdout?: (chunk: Buffer) => void;
  /** Given, stderr is handed over as it arrives, not kept for the result. */
  readonly onStderr?: (chunk: Buffer) => void;
  /** Aborting it ends the command's channel or client (what it started on its own is the caller's to end). */
  readonly signal?: AbortSignal;
  /**
   * A command that ends what the run started, on its way out (the kill of a followed or streaming
   * command's process group at its stop): its failure is the caller's to ignore, and, like the
   * registry's removals, it is no point where the crash-point test injects an internal error.
   */
  readonly cleanup?: boolean;
}

/** A command's outcome on the runtime's host. */
export interface ExecResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * What a place can do for a run, declared by its runtime and checked before the run (a fault that
 * needs what the place lacks is refused in one line, before anything is made).
 */
export interface RuntimeCapabilities {
  /** Its paths are this machine's: files are read and written here directly, nothing streamed back. */
  readonly sharedFilesystem: boolean;
  /** Its wall clock is this machine's (the same kernel): times stamped there need no offset. */
  readonly sharedClock: boolean;
  /** Delay and duplication of packets (netem), for packet faults beyond loss. */
  readonly netem: boolean;
  /** The FUSE disk layer over a node's data dir (disk faults). */
  readonly fuse: boolean;
  /** libfaketime preloaded into a node (clock faults). */
  readonly libfaketime: boolean;
  /** Data dirs copied to and from a checkpoint. */
  readonly checkpoints: boolean;
  /** Membership changes, which wipe a node's data dir. */
  readonly membership: boolean;
  /**
   * The process `start` gives is the command itself (else a shell leading the group, whose child
   * the command is): what is named after the command's pid (libfaketime's files) is found by it.
   */
  readonly commandLeadsGroup: boolean;
}

/**
 * Where node processes run: this host (`local`), a host reached over SSH (`ssh`), or a container (`docker`). Everything a
 * cluster does to a node's process and files goes through it, so the same cluster runs on either.
 */
export interface NodeRuntime {
  /** Where its commands run, as data (the registry's records of what is made there: `undoOn`). */
  readonly place: RuntimePlace;
  /** The host's name as the user gave it (`local` for this one). */
  readonly host: string;
  readonly capabilities: RuntimeCapabilities;
  /** Starts a command in its own process group, recorded in the registry (before it is made where the runtime can). */
  start(spec: StartSpec, registry: ResourceRegistry): Promise<RuntimeProcess>;
  /** Sends a signal to the process's whole group. */
  signal(proc: RuntimeProcess, signal: NodeJS.Signals): Promise<void>;
  /**
   * Runs a command to completion, `input` its stdin when given; never rejects for a non-zero exit.
   * With `onStdout`/`onStderr`/`signal` it is a live command the caller talks to while it runs (a
   * followed file, a packet capture, a clock read in a loop: `follow.ts`, `streaming.ts`).
   */
  exec(argv: readonly string[], options?: ExecOptions): Promise<ExecResult>;
  /**
   * Copies a local file there, with its mode, whole or not at all. Small bytes, dirs, removal and
   * the rest are written once over these verbs (`files.ts`, `follow.ts`).
   */
  put(path: string, localFile: string): Promise<void>;
  /** The bytes of a file there. */
  get(path: string): Promise<Buffer>;
  close(): Promise<void>;
}
