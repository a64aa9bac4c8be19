import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

import Database from 'better-sqlite3';
import { afterAll, afterEach, beforeAll } from 'vitest';

import { Cluster, type NodeExit } from '../../src/cluster/cluster.js';
import { ProxyBackend } from '../../src/cluster/net/proxy.js';
import { ResourceRegistry } from '../../src/cluster/resources.js';
import { localClockPreload } from '../../src/cluster/clock-preload.js';
import { CONSOLE_LOG } from '../../src/cli/console-log-reporter.js';
import { kvraft } from '../../src/systems/kvraft/index.js';
import type { SystemAdapter } from '../../src/systems/system.js';

export { isRoot, skipReason } from '../systems/_helpers/cluster.js';

export const REPO = resolve(import.meta.dirname, '..', '..');
export const BIN = join(REPO, 'bin', 'mallory.js');

export interface Sandbox {
  readonly store: string;
  readonly state: string;
  readonly env: NodeJS.ProcessEnv;
}

/** A private store and registry dir, so tests never see each other's runs. */
export function sandbox(): Sandbox {
  const root = mkdtempSync(join(tmpdir(), 'mallory-e2e-'));
  const state = join(root, 'state');
  return { store: join(root, 'store'), state, env: { ...process.env, MALLORY_STATE_DIR: state } };
}

/**
 * Sandboxes for the tests of the enclosing describe (or file): each call of the function returned
 * makes one, removed with what its runs left (`disposeSandbox`) after the test that made it.
 */
export function useSandboxes(): () => Sandbox {
  const boxes: Sandbox[] = [];
  afterEach(() => {
    for (const b of boxes.splice(0)) disposeSandbox(b);
  });
  return () => {
    const box = sandbox();
    boxes.push(box);
    return box;
  };
}

/**
 * One sandbox for every test of the enclosing describe (or file): made in a beforeAll, removed with
 * what its runs left in an afterAll. Read it inside tests and hooks (the function throws before).
 */
export function useSandbox(): () => Sandbox {
  let box: Sandbox | undefined;
  beforeAll(() => {
    box = sandbox();
  });
  afterAll(() => {
    if (box !== undefined) disposeSandbox(box);
    box = undefined;
  });
  return () => {
    if (box === undefined) throw new Error('useSandbox: the sandbox is made in beforeAll');
    return box;
  };
}

/**
 * Removes a sandbox: first what its runs may have left (a test that fails between killing a run and
 * cleaning up would otherwise leave the run's nodes behind with no registry to find them), then
 * its files.
 */
export function disposeSandbox(box: Sandbox): void {
  spawnSync(process.execPath, [BIN, 'cleanup'], { env: box.env, cwd: REPO, stdio: 'ignore' });
  rmSync(join(box.store, '..'), { recursive: true, force: true });
}

export interface CliResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * The JSON document a `--json` command printed. When there is none (the command failed before
 * printing it), throws with its exit code and the end of its stderr, which say why.
 */
export function jsonOf(result: CliResult): unknown {
  try {
    return JSON.parse(result.stdout) as unknown;
  } catch {
    throw new Error(
      `no JSON on stdout (exit ${result.code}): ${result.stderr.slice(-2000) || result.stdout.slice(-2000)}`,
    );
  }
}

/**
 * What a command's exit said, for an assertion's message: the bugs its `--json` summary holds (kind,
 * name, message, the start of the evidence) and the end of its stderr. A run that exits 1 where a
 * test expects 0 then says in the test's output what it found, so the finding can be triaged even
 * when its store is gone with the test's sandbox.
 */
export function explainExit(result: CliResult): string {
  const parts = [`exit ${result.code}`];
  try {
    const summary = JSON.parse(result.stdout) as {
      runDir?: string;
      bugs?: { kind: string; name: string; message: string; schedule: number; evidence: unknown }[];
    };
    if (summary.runDir !== undefined) parts.push(`run ${summary.runDir}`);
    for (const bug of summary.bugs ?? []) {
      parts.push(
        `bug in schedule ${bug.schedule}: ${bug.kind}/${bug.name}: ${bug.message}; evidence ${JSON.stringify(bug.evidence).slice(0, 1500)}`,
      );
    }
  } catch {
    // no summary on stdout: stderr says why
  }
  parts.push(`stderr: ${result.stderr.slice(-2000)}`);
  return parts.join('\n');
}

/** How many of a campaign's last stderr lines an assertion's message shows. */
export const STDERR_TAIL_LINES = 40;

/** The run dir a run's stderr names (its first line says `run dir X`), or undefined before it has one. */
export function runDirOf(stderr: string): string | undefined {
  return /^\s*run dir:? (\S+)$/m.exec(stderr)?.[1];
}

/**
 * Why a campaign exited as it did, for an assertion's message: its exit, the last
 * `STDERR_TAIL_LINES` lines of its stderr and what its run dir's console log (`mallory.log`, what
 * the terminal showed) holds. A flake in CI ("exited 2") is then diagnosable from the test's output
 * alone, once the sandbox holding the run is gone.
 */
export function explainCampaign(code: number | null, stderr: string): string {
  const tail = stderr
    .split('\n')
    .slice(-STDERR_TAIL_LINES - 1)
    .join('\n');
  const parts = [`exit ${code}`, `stderr (last ${STDERR_TAIL_LINES} lines):\n${tail}`];
  const runDir = runDirOf(stderr);
  if (runDir === undefined) parts.push('no run dir (the run ended before it had one)');
  else {
    const log = join(runDir, CONSOLE_LOG);
    let text: string;
    try {
      text = readFileSync(log, 'utf8');
    } catch (error) {
      text = `(unreadable: ${error instanceof Error ? error.message : String(error)})`;
    }
    parts.push(`${log}:\n${text}`);
  }
  return parts.join('\n');
}

export function mallory(args: readonly string[], box: Sandbox, timeoutMs = 300_000): Promise<CliResult> {
  return new Promise((resolvePromise) => {
    const child = spawn(process.execPath, [BIN, ...args], { env: box.env, cwd: REPO });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolvePromise({ code, stdout, stderr });
    });
  });
}

export function malloryJson(args: readonly string[], box: Sandbox): CliResult {
  const r = spawnSync(process.execPath, [BIN, ...args], { env: box.env, cwd: REPO, encoding: 'utf8' });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** PIDs of processes whose command line mentions `needle` (to prove nothing of a run is left). */
export function processesMentioning(needle: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmd = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      if (cmd.includes(needle) && Number(entry) !== process.pid) pids.push(Number(entry));
    } catch {
      // exited meanwhile
    }
  }
  return pids;
}

/** The processes under `pid`, at any depth (a run's nodes, detached into groups of their own). */
export function descendantsOf(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(parent, [...(children.get(parent) ?? []), Number(entry)]);
    } catch {
      // exited meanwhile
    }
  }
  const found: number[] = [];
  for (let queue = [pid]; queue.length > 0;) {
    const next = children.get(queue.shift() ?? 0) ?? [];
    found.push(...next);
    queue.push(...next);
  }
  return found;
}

export function registryFiles(box: Sandbox): string[] {
  return existsSync(box.state) ? readdirSync(box.state).filter((f) => f.endsWith('.jsonl')) : [];
}

/** Polls `check` every 200 ms until it holds, or rejects after `timeoutMs`. */
export function waitFor(check: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  return new Promise((resolve, reject) => {
    const tick = (): void => {
      if (check()) resolve();
      else if (Date.now() > deadline) reject(new Error('timed out waiting'));
      else setTimeout(tick, 200);
    };
    tick();
  });
}

/** A real kvraft cluster on the proxy backend, for tests that drive the nemesis or clients directly. */
export interface KvraftCluster {
  readonly system: SystemAdapter;
  readonly net: ProxyBackend;
  readonly cluster: Cluster;
  /** The cluster's run dir (node logs, clock control files). */
  readonly root: string;
  close(): Promise<void>;
}

export async function startKvraft(
  nodes: readonly string[],
  seed: number,
  onExit?: (exit: NodeExit) => void,
  /** libfaketime to preload into the nodes (clock faults), when given. */
  libfaketime?: string,
): Promise<KvraftCluster> {
  const root = mkdtempSync(join(tmpdir(), 'mallory-kvraft-'));
  process.env.MALLORY_STATE_DIR = join(root, 'state');
  const system = kvraft.create({ bugs: [] });
  const net = await ProxyBackend.create({
    nodes,
    services: system.services,
    peerServices: system.peerServices,
    seed,
  });
  const registry = new ResourceRegistry(`kvraft-test-${process.pid}`, root);
  const cluster = new Cluster({
    system,
    nodes,
    runDir: root,
    runId: `kvtest${process.pid}`,
    network: net,
    registry,
    ...(onExit ? { onExit } : {}),
    ...(libfaketime !== undefined ? { clock: localClockPreload(libfaketime, root) } : {}),
  });
  await cluster.startAll();
  if (!(await cluster.waitReady(20_000))) throw new Error('kvraft did not become ready');
  return {
    system,
    net,
    cluster,
    root,
    async close() {
      await cluster.close();
      await net.close();
      registry.releaseAll();
      delete process.env.MALLORY_STATE_DIR;
      rmSync(root, { recursive: true, force: true });
    },
  };
}

/** The `run` row of a run's store: its final status and id. */
export function runStatus(runDir: string): { status: string; id: string } {
  const db = new Database(join(runDir, 'run.db'), { readonly: true });
  try {
    return db.prepare('SELECT status, id FROM run').get() as { status: string; id: string };
  } finally {
    db.close();
  }
}

/**
 * Runs a hand-written kvraft schedule with a bug switch on (`--steps 6`, seed 7, `--json`) and
 * returns the run's result and its first bug's directory; the run must find the bug.
 */
export async function findBug(
  box: Sandbox,
  schedule: string,
  bug = 'ack-before-commit',
): Promise<{ readonly run: CliResult; readonly bugDir: string }> {
  const args = ['run', '--bug', bug, '--schedule', schedule, '--steps', '6', '--time', '5m', '--seed', '7'];
  const run = await mallory([...args, '--store', box.store, '--json'], box);
  if (run.code !== 1)
    throw new Error(`expected the run to find ${bug} (exit 1), got ${run.code}: ${run.stderr}`);
  const bugDir = (jsonOf(run) as { bugs: { dir: string }[] }).bugs[0].dir;
  return { run, bugDir };
}
