import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';

import { processStartTime, type ResourceRegistry } from '../../resources.js';

/**
 * The marker written after each rule set: a table we use for nothing else, with one user chain.
 * Without `--noflush` every table block starts by deleting that table's user chains, and verbose
 * `iptables-restore` says so — so "Deleting chain `mlr-applied'" comes out when the marker's block
 * begins, which is after every block before it was committed (blocks are parsed and committed one
 * after the other).
 */
const MARKER_CHAIN = 'mlr-applied';
const MARKER = `*raw\n:${MARKER_CHAIN} - [0:0]\nCOMMIT\n`;
const APPLIED = `Deleting chain \`${MARKER_CHAIN}'`;
const APPLY_TIMEOUT_MS = 5_000;

/**
 * One long-lived `iptables-restore` in a namespace, fed rule sets on its stdin: replacing a
 * namespace's rules costs a write and a commit instead of starting `ip netns exec` and
 * `iptables-restore` each time (about 35 ms of a partition's latency). Rule sets are applied one at
 * a time, in order; `apply` resolves once the set is committed. The process is recorded in the
 * run's registry as soon as it has a PID; it ends by itself when its stdin closes (also when the
 * fuzzer dies).
 */
export class RulesLoader {
  private child: ChildProcessWithoutNullStreams | undefined;
  private resourceId: number | undefined;
  private stdout = '';
  private stderr = '';
  private waiting: { resolve: () => void; reject: (e: Error) => void; timer: NodeJS.Timeout } | undefined;
  private queue: Promise<void> = Promise.resolve();

  constructor(
    /** The command that runs a program in the namespace (`ip netns exec NS`). */
    private readonly prefix: readonly string[],
    private readonly registry: ResourceRegistry,
    private readonly label: string,
  ) {}

  /** Replaces the tables the rule set names (`iptables-restore` input ending in COMMIT). */
  apply(rules: string): Promise<void> {
    const next = this.queue.then(() => this.applyNow(rules));
    this.queue = next.catch(() => undefined);
    return next;
  }

  /** Ends the process (its recorded resource released), if it runs. */
  close(): void {
    const child = this.child;
    this.child = undefined;
    child?.stdin.end();
    if (this.resourceId !== undefined) this.registry.release(this.resourceId);
    this.resourceId = undefined;
    this.waiting?.reject(new Error(`${this.label}: closed`));
  }

  private applyNow(rules: string): Promise<void> {
    const child = this.child ?? this.start();
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.fail(new Error(`${this.label}: rules not applied within ${APPLY_TIMEOUT_MS} ms`));
      }, APPLY_TIMEOUT_MS);
      this.waiting = { resolve, reject, timer };
      this.stdout = '';
      this.stderr = '';
      child.stdin.write(rules + MARKER);
    });
  }

  private start(): ChildProcessWithoutNullStreams {
    // Line-buffered (coreutils' stdbuf): a pipe's block buffering would hold the marker's line
    // until the next rule set arrives.
    const child = spawn(
      this.prefix[0],
      [...this.prefix.slice(1), 'stdbuf', '-oL', 'iptables-restore', '-v'],
      {
        detached: true,
        stdio: ['pipe', 'pipe', 'pipe'],
      },
    );
    const pid = child.pid;
    if (pid === undefined) throw new Error(`${this.label}: cannot start iptables-restore`);
    this.resourceId = this.registry.record({
      kind: 'process',
      pid,
      startTime: processStartTime(pid) ?? '',
      label: this.label,
    });
    this.child = child;
    child.unref();
    child.stdout.on('data', (chunk: Buffer) => {
      this.stdout += chunk.toString();
      if (this.waiting && this.stdout.includes(APPLIED)) this.settle();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      this.stderr += chunk.toString();
    });
    child.stdin.on('error', () => {
      // The process is gone: its exit says why.
    });
    child.once('exit', (code) => {
      if (this.child !== child) return;
      this.child = undefined;
      if (this.resourceId !== undefined) this.registry.forget(this.resourceId);
      this.resourceId = undefined;
      this.fail(new Error(`${this.label}: iptables-restore exited (${code}): ${this.stderr.trim()}`));
    });
    // The marker's chain must exist before the first rule set, so its deletion can say "applied".
    child.stdin.write(MARKER);
    return child;
  }

  private settle(): void {
    const w = this.waiting;
    this.waiting = undefined;
    if (!w) return;
    clearTimeout(w.timer);
    w.resolve();
  }

  private fail(error: Error): void {
    const w = this.waiting;
    this.waiting = undefined;
    if (!w) return;
    clearTimeout(w.timer);
    // A loader that timed out may be stuck: the next rule set starts a fresh one.
    if (this.child) this.close();
    w.reject(error);
  }
}
