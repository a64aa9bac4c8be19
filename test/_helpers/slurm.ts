import { type ChildProcess, execFile, spawn } from 'node:child_process';
import {
  chmodSync,
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { availableParallelism, hostname, tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { randomBytes } from 'node:crypto';

// Loaded only under vitest, as the SSH hosts' helper is.
const { afterAll, beforeAll } =
  process.env.VITEST === undefined ? { afterAll: noHook, beforeAll: noHook } : await import('vitest');

function noHook(): never {
  throw new Error('useSlurm runs under vitest only');
}

/** Debian's programs a private Slurm needs: its controller, its node daemon, munge, and the clients. */
const PROGRAMS = ['munged', 'slurmctld', 'slurmd', 'sbatch', 'squeue', 'scancel', 'scontrol', 'sinfo'];
const PACKAGES = 'slurmctld slurmd slurm-client munge';
/** How long the daemons get to answer (controller up, the node idle) before the start fails. */
const READY_TIMEOUT_MS = 30_000;
/** How long a daemon gets to exit on SIGTERM before it is killed. */
const STOP_TIMEOUT_MS = 10_000;
/**
 * Seconds between a cancelled task's SIGTERM and its SIGKILL (Slurm's default is 30): long
 * enough for a worker to stop its campaign and remove what it made.
 */
const KILL_WAIT_S = 20;
/** How long the end waits for cancelled jobs to leave the queue: their kill wait and some. */
const DRAIN_TIMEOUT_MS = (KILL_WAIT_S + 20) * 1000;
/** How long the controller keeps an ended job's record (its state and exit code) for `scontrol`. */
const MIN_JOB_AGE_S = 3600;
const POLL_MS = 250;
const MUNGE_KEY_BYTES = 1024;
const CLIENT_TIMEOUT_MS = 30_000;

function onPath(program: string): boolean {
  const dirs = [...(process.env.PATH ?? '').split(delimiter), '/usr/sbin', '/sbin'];
  return dirs.some((d) => d !== '' && existsSync(join(d, program)));
}

/** Why a private Slurm cannot be started here, or undefined when it can. */
export function slurmUnavailable(): string | undefined {
  if (process.getuid?.() !== 0) return 'needs root (slurmd starts each task as its user)';
  const missing = PROGRAMS.filter((p) => !onPath(p));
  if (missing.length > 0) return `${missing.join(', ')} missing: apt-get install -y ${PACKAGES}`;
  return undefined;
}

export interface ClientResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** One task of a job array, as the controller says it ended (or is). */
export interface ArrayTask {
  readonly task: number;
  /** `PENDING`, `RUNNING`, `COMPLETED`, `FAILED`, `CANCELLED`, … */
  readonly state: string;
  /** The task's exit code (`ExitCode=N:S`, N), and the signal that ended it (S). */
  readonly exitCode: number;
  readonly signal: number;
}

/** A single-node Slurm of the test's own: munged, slurmctld and slurmd, on loopback. */
export interface Slurm {
  /** Its files: config, state, spool, logs, munge key and socket. */
  readonly dir: string;
  /** `base` with SLURM_CONF naming this cluster's config: what its clients (sbatch, squeue …) need. */
  env(base?: NodeJS.ProcessEnv): NodeJS.ProcessEnv;
  /** Runs a Slurm client (`['squeue', …]`) against this cluster. */
  client(argv: readonly string[]): Promise<ClientResult>;
  /** Every task of an array job, by task id. */
  tasks(jobId: number): Promise<ArrayTask[]>;
  /** Waits until no task of the job is pending, running or completing; then its tasks. */
  waitForJob(jobId: number, timeoutMs: number): Promise<ArrayTask[]>;
  /**
   * Processes other than the daemons that carry this cluster's config in their environment: a
   * task's step daemon (slurmstepd) and whatever the task started. None once every job has ended.
   */
  leftovers(): number[];
  /** The end of each daemon's log, for a failed assertion's message. */
  logs(): string;
  close(): Promise<void>;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => {
        if (address !== null && typeof address === 'object') resolve(address.port);
        else reject(new Error('no port'));
      });
    });
  });
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function environOf(pid: string): string {
  try {
    return readFileSync(`/proc/${pid}/environ`, 'utf8');
  } catch {
    return '';
  }
}

function parentOf(pid: string): number {
  try {
    // `pid (comm) state ppid …`: comm may hold spaces and parentheses, so read after its last ')'.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return 0;
  }
}

/** What a process runs, for a message. */
export function commandOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ').trim();
  } catch {
    return '(gone)';
  }
}

/** One line of `scontrol show job -o`, as its `Key=Value` fields. */
function fields(line: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const word of line.trim().split(/\s+/)) {
    const eq = word.indexOf('=');
    if (eq > 0) out.set(word.slice(0, eq), word.slice(eq + 1));
  }
  return out;
}

interface Daemon {
  readonly name: string;
  readonly child: ChildProcess;
  readonly log: string;
  exited: boolean;
}

/**
 * Starts a private Slurm: munged with a fresh key on a socket in a temp dir, slurmctld and slurmd
 * in the foreground (`-D`) on a config of their own (ports picked free, bound to 127.0.0.1, one
 * node with this machine's CPUs, no cgroups), as processes this test started and ends by PID.
 * Nothing of the machine's own Slurm or munge (if any) is used or touched.
 */
export async function startSlurm(): Promise<Slurm> {
  const dir = mkdtempSync(join(tmpdir(), 'mallory-slurm-'));
  // munged wants its socket's dir and every dir above it searchable by all; its key private.
  chmodSync(dir, 0o755);
  const keyDir = join(dir, 'key');
  const socketDir = join(dir, 'munge');
  const logDir = join(dir, 'log');
  for (const d of [socketDir, logDir, join(dir, 'state'), join(dir, 'spool')]) mkdirSync(d, { mode: 0o755 });
  mkdirSync(keyDir, { mode: 0o700 });
  const key = join(keyDir, 'munge.key');
  writeFileSync(key, randomBytes(MUNGE_KEY_BYTES), { mode: 0o400 });
  const socket = join(socketDir, 'munge.socket');
  const conf = join(dir, 'slurm.conf');
  const env = (base: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv => ({ ...base, SLURM_CONF: conf });
  const daemons: Daemon[] = [];
  /** The daemons' PIDs: they carry the config in their environment too, and are not leftovers. */
  const own = new Set<number>();
  const start = (name: string, argv: readonly string[]): Daemon => {
    const log = join(logDir, `${name}.out`);
    const fd = openSync(log, 'a');
    const child = spawn(argv[0], argv.slice(1), { env: env(), stdio: ['ignore', fd, fd] });
    closeSync(fd);
    const daemon: Daemon = { name, child, log, exited: false };
    child.once('exit', () => (daemon.exited = true));
    child.once('error', () => (daemon.exited = true));
    daemons.push(daemon);
    if (child.pid !== undefined) own.add(child.pid);
    return daemon;
  };
  const logs = (): string =>
    daemons
      .map((d) => {
        const text = existsSync(d.log) ? readFileSync(d.log, 'utf8') : '';
        return `--- ${d.name}${d.exited ? ' (exited)' : ''}:\n${text.split('\n').slice(-25).join('\n')}`;
      })
      .join('\n');
  const client = (argv: readonly string[]): Promise<ClientResult> =>
    new Promise((resolve) => {
      execFile(
        argv[0],
        argv.slice(1),
        { env: env(), timeout: CLIENT_TIMEOUT_MS },
        (error, stdout, stderr) => {
          const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
          resolve({ code, stdout, stderr });
        },
      );
    });
  const stop = async (daemon: Daemon): Promise<void> => {
    if (daemon.exited || daemon.child.pid === undefined) return;
    const exited = new Promise<void>((resolve) => {
      if (daemon.exited) resolve();
      else
        daemon.child.once('exit', () => {
          resolve();
        });
    });
    daemon.child.kill('SIGTERM');
    const timer = setTimeout(() => daemon.child.kill('SIGKILL'), STOP_TIMEOUT_MS);
    await exited;
    clearTimeout(timer);
  };
  /** Processes carrying this cluster's config that are neither a daemon nor a daemon's helper (slurmscriptd). */
  const leftovers = (): number[] => {
    const marker = `SLURM_CONF=${conf}\0`;
    return readdirSync('/proc')
      .filter((p) => /^\d+$/.test(p) && Number(p) !== process.pid && !own.has(Number(p)))
      .filter((p) => environOf(p).includes(marker) && !own.has(parentOf(p)))
      .map(Number);
  };
  const tasks = async (jobId: number): Promise<ArrayTask[]> => {
    const shown = await client(['scontrol', 'show', 'job', '-o', String(jobId)]);
    if (shown.code !== 0) throw new Error(`scontrol show job ${jobId} failed: ${shown.stderr.trim()}`);
    return shown.stdout
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((line) => {
        const f = fields(line);
        const [exitCode, signal] = (f.get('ExitCode') ?? '0:0').split(':').map(Number);
        return { task: Number(f.get('ArrayTaskId')), state: f.get('JobState') ?? '?', exitCode, signal };
      })
      .sort((a, b) => a.task - b.task);
  };
  const close = async (): Promise<void> => {
    const ctld = daemons.find((d) => d.name === 'slurmctld');
    if (ctld !== undefined && !ctld.exited) {
      // Every job of this private cluster is the test's own.
      await client(['scancel', '--user', 'root']);
      const deadline = Date.now() + DRAIN_TIMEOUT_MS;
      for (;;) {
        const queue = await client(['squeue', '-h', '-o', '%i']);
        if ((queue.code === 0 && queue.stdout.trim() === '') || Date.now() > deadline) break;
        await sleep(POLL_MS);
      }
    }
    for (const name of ['slurmd', 'slurmctld']) {
      const daemon = daemons.find((d) => d.name === name);
      if (daemon !== undefined) await stop(daemon);
    }
    // A step daemon or a task's process that outlived the cancel: ours by the config it carries.
    for (const pid of leftovers()) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone meanwhile
      }
    }
    const munged = daemons.find((d) => d.name === 'munged');
    if (munged !== undefined) await stop(munged);
    rmSync(dir, { recursive: true, force: true });
  };

  try {
    const [ctldPort, slurmdPort] = [await freePort(), await freePort()];
    const host = hostname().split('.')[0];
    writeFileSync(
      conf,
      [
        'ClusterName=mallorytest',
        // The controller is this machine by its short name, reached (and bound) on loopback.
        `SlurmctldHost=${host}(127.0.0.1)`,
        `SlurmctldPort=${ctldPort}`,
        `SlurmdPort=${slurmdPort}`,
        'CommunicationParameters=NoCtldInAddrAny,NoInAddrAny',
        'SlurmUser=root',
        'SlurmdUser=root',
        'AuthType=auth/munge',
        'CredType=cred/munge',
        `AuthInfo=socket=${socket}`,
        `StateSaveLocation=${join(dir, 'state')}`,
        `SlurmdSpoolDir=${join(dir, 'spool')}`,
        `SlurmctldPidFile=${join(dir, 'slurmctld.pid')}`,
        `SlurmdPidFile=${join(dir, 'slurmd.pid')}`,
        `SlurmctldLogFile=${join(logDir, 'slurmctld.log')}`,
        `SlurmdLogFile=${join(logDir, 'slurmd.log')}`,
        // No cgroups: tasks are tracked by their process tree, and nothing is confined.
        'ProctrackType=proctrack/linuxproc',
        'TaskPlugin=task/none',
        'JobAcctGatherType=jobacct_gather/none',
        'AccountingStorageType=accounting_storage/none',
        'JobCompType=jobcomp/none',
        'MpiDefault=none',
        'SchedulerType=sched/builtin',
        // One CPU a task: as many tasks at once as the node has CPUs.
        'SelectType=select/cons_tres',
        'SelectTypeParameters=CR_CPU',
        'ReturnToService=2',
        `KillWait=${KILL_WAIT_S}`,
        `MinJobAge=${MIN_JOB_AGE_S}`,
        `NodeName=${host} NodeAddr=127.0.0.1 CPUs=${availableParallelism()} State=UNKNOWN`,
        'PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP',
        '',
      ].join('\n'),
    );
    const munged = start('munged', [
      'munged',
      '--foreground',
      `--socket=${socket}`,
      `--key-file=${key}`,
      `--pid-file=${join(socketDir, 'munged.pid')}`,
      `--seed-file=${join(keyDir, 'munged.seed')}`,
      `--log-file=${join(logDir, 'munged.log')}`,
    ]);
    await waitUntil(() => existsSync(socket), 'munged to make its socket', munged, logs);
    const ctld = start('slurmctld', ['slurmctld', '-D', '-c', '-f', conf]);
    await waitUntilAsync(
      async () => (await client(['scontrol', 'ping'])).stdout.includes('is UP'),
      'slurmctld to answer',
      ctld,
      logs,
    );
    const slurmd = start('slurmd', ['slurmd', '-D', '-f', conf]);
    await waitUntilAsync(
      async () => (await client(['sinfo', '-h', '-N', '-o', '%T'])).stdout.trim() === 'idle',
      'the node to be idle',
      slurmd,
      logs,
    );
  } catch (error) {
    const message = `${error instanceof Error ? error.message : String(error)}\n${logs()}`;
    await close();
    throw new Error(message);
  }

  return {
    dir,
    env,
    client,
    tasks,
    async waitForJob(jobId, timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const queue = await client(['squeue', '-h', '-j', String(jobId), '-o', '%T']);
        if (queue.code === 0 && queue.stdout.trim() === '') return tasks(jobId);
        if (Date.now() > deadline) {
          throw new Error(
            `job ${jobId} still queued after ${timeoutMs} ms: ${queue.stdout}${queue.stderr}\n${logs()}`,
          );
        }
        await sleep(POLL_MS);
      }
    },
    leftovers,
    logs,
    close,
  };
}

async function waitUntil(
  check: () => boolean,
  what: string,
  daemon: Daemon,
  logs: () => string,
): Promise<void> {
  await waitUntilAsync(() => Promise.resolve(check()), what, daemon, logs);
}

async function waitUntilAsync(
  check: () => Promise<boolean>,
  what: string,
  daemon: Daemon,
  logs: () => string,
): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (!(await check())) {
    if (daemon.exited) throw new Error(`${daemon.name} exited while waiting for ${what}\n${logs()}`);
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\n${logs()}`);
    await sleep(POLL_MS);
  }
}

/** What `useSlurm` makes: valid from its beforeAll to its afterAll. */
export interface SlurmFixture {
  readonly slurm: Slurm;
}

/**
 * A private Slurm for the tests of the enclosing describe (or file): started in a beforeAll, ended
 * in an afterAll (its jobs cancelled, its daemons stopped, its files removed). Does nothing where
 * it cannot run (`slurmUnavailable`): the tests using it are skipped there.
 */
export function useSlurm(): SlurmFixture {
  let slurm: Slurm | undefined;
  beforeAll(async () => {
    if (slurmUnavailable() !== undefined) return;
    slurm = await startSlurm();
  });
  afterAll(async () => {
    await slurm?.close();
  });
  return {
    get slurm() {
      if (slurm === undefined) throw new Error('useSlurm: the cluster is started in beforeAll');
      return slurm;
    },
  };
}
