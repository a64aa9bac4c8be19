import { spawn } from 'node:child_process';
import { chmodSync, existsSync, readdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';

import {
  BIN,
  mallory,
  processesMentioning,
  REPO,
  registryFiles,
  type Sandbox,
  waitFor,
  runStatus,
  useSandboxes,
  descendantsOf,
} from './helpers.js';

/** Every way a run can end records a final status and leaves nothing behind. */

function startRun(box: Sandbox, args: readonly string[], detached = false) {
  const child = spawn(process.execPath, [BIN, 'run', '--store', box.store, ...args], {
    env: box.env,
    cwd: REPO,
    stdio: ['ignore', 'ignore', 'pipe'],
    detached,
  });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) =>
    child.once('exit', (code, signal) => {
      r({ code, signal });
    }),
  );
  return { child, exited, stderr: () => stderr };
}

describe('exit paths of mallory run (kvraft, real processes)', () => {
  const box = useSandboxes();

  it.each([
    { signal: 'SIGHUP', times: 1, seed: '5', what: 'SIGHUP stops a run like Ctrl-C' },
    { signal: 'SIGTERM', times: 1, seed: '5', what: 'SIGTERM stops a run like Ctrl-C' },
    { signal: 'SIGINT', times: 2, seed: '6', what: 'a second Ctrl-C stops at once' },
  ] as const)('$what: status interrupted, exit 130, nothing left', async ({ signal, times, seed }) => {
    const b = box();
    const run = startRun(b, ['--time', '5m', '--seed', seed]);
    await waitFor(() => run.stderr().includes('run dir'), 30_000);
    await new Promise((r) => setTimeout(r, 3000));
    for (let i = 0; i < times; i++) run.child.kill(signal);
    const { code } = await run.exited;
    expect(code).toBe(130);
    const { status: s, id } = runStatus(realpathSync(join(b.store, 'latest')));
    expect(s).toBe('interrupted');
    expect(processesMentioning(`mallory-${id}`)).toEqual([]);
    expect(registryFiles(b)).toEqual([]);
  });

  it('a stop signal sent to every process of the run at once (scancel, a container stop) ends it interrupted, with no crash of the nodes it reached', async () => {
    const b = box();
    // Its own process group, as a job step's: the signal goes to the group and to every node in it.
    const run = startRun(b, ['--time', '60s', '--seed', '1'], true);
    await waitFor(() => /schedule 1 /.test(run.stderr()), 60_000);
    const nodes = descendantsOf(run.child.pid ?? 0);
    expect(nodes.length).toBeGreaterThanOrEqual(3);
    // The nodes first: their exits reach the fuzzer before its own signal does, as they may under Slurm.
    for (const pid of nodes) process.kill(pid, 'SIGTERM');
    process.kill(-(run.child.pid ?? 0), 'SIGTERM');
    const { code } = await run.exited;
    expect(code, run.stderr()).toBe(130);
    const dir = realpathSync(join(b.store, 'latest'));
    const { status: s, id } = runStatus(dir);
    expect(s).toBe('interrupted');
    const db = new Database(join(dir, 'run.db'), { readonly: true });
    try {
      expect((db.prepare('SELECT count(*) AS n FROM bugs').get() as { n: number }).n).toBe(0);
    } finally {
      db.close();
    }
    expect(run.stderr()).toMatch(
      /n\d exited with the run's stop signal \(.*; the run got SIGTERM\) \(not a crash\)/,
    );
    expect(readFileSync(join(dir, 'history.jsonl'), 'utf8')).toContain('"f":"stop-exit"');
    expect(processesMentioning(`mallory-${id}`)).toEqual([]);
    expect(registryFiles(b)).toEqual([]);
  });

  it('--schedule keeps to --time: a line past the budget is skipped and said so', async () => {
    const b = box();
    const schedule = join(b.store, '..', 'late.jsonl');
    writeFileSync(schedule, '{"atMs": 60000, "f": "kill", "value": "one"}\n');
    const started = Date.now();
    const r = await mallory(['run', '--schedule', schedule, '--time', '8s', '--store', b.store], b);
    const elapsedMs = Date.now() - started;
    expect(r.code, r.stderr).toBe(0);
    // 8 s of budget, plus start-up, the final reads, the check and the teardown: far below 60 s.
    expect(elapsedMs).toBeLessThan(30_000);
    const history = readFileSync(join(realpathSync(join(b.store, 'latest')), 'history.jsonl'), 'utf8');
    expect(history).toMatch(/"f":"kill".*"error":"skipped: at 60000 ms, past the end of the run/);
    // The terminal says so too, with the reason.
    expect(r.stderr).toMatch(/schedule 1 \+60\.0s kill \(skipped: at 60000 ms, past the end of the run/);
  });

  it('policy values are saved every schedule: a killed run seeds the next one and says how much', async () => {
    const b = box();
    const run = startRun(b, ['--time', '5m', '--steps', '2', '--step', '1s', '--seed', '7']);
    await waitFor(() => run.stderr().includes('run dir'), 30_000);
    const dir = realpathSync(join(b.store, 'latest'));
    const saved = (): number => {
      const db = new Database(join(dir, 'run.db'), { readonly: true });
      try {
        return (db.prepare('SELECT count(*) AS n FROM policy_values').get() as { n: number }).n;
      } finally {
        db.close();
      }
    };
    await waitFor(() => saved() > 0, 60_000);
    run.child.kill('SIGKILL');
    await run.exited;
    // --dry-run lists the dead run's resources and removes nothing; cleanup then removes them.
    const dry = await mallory(['cleanup', '--dry-run'], b);
    expect(dry.code).toBe(0);
    expect(dry.stdout).toContain(`run ${dir} (fuzzer pid ${run.child.pid} gone)`);
    expect(dry.stdout).toMatch(/^ {2}process \d+ \(n\d: /m);
    expect(dry.stdout).toMatch(/would remove [1-9]\d* resources of 1 runs/);
    expect(registryFiles(b)).toHaveLength(1);
    expect(runStatus(dir).status).toBe('running');
    const cleanup = await mallory(['cleanup'], b);
    expect(cleanup.code).toBe(0);
    expect(cleanup.stdout).toContain(`marked incomplete: ${dir}`);
    expect(registryFiles(b)).toEqual([]);
    expect(runStatus(dir).status).toBe('incomplete');
    const seeded = await mallory(
      ['run', '--seed-from', dir, '--time', '3s', '--steps', '1', '--step', '1s', '--store', b.store],
      b,
    );
    expect(seeded.code, seeded.stderr).toBe(0);
    expect(seeded.stderr).toMatch(
      new RegExp(`seeded from ${dir} \\(incomplete\\): [1-9]\\d* policy values, [1-9]\\d* states`),
    );
  });
});

describe('bad settings are one line, exit 2, and leave no run behind', () => {
  const newSandbox = useSandboxes();

  it.each([
    [['--store', '/proc/x'], /^mallory: --store \/proc\/x: cannot create \/proc\/x \(ENOENT\)/],
    [['--store', '/etc/hostname'], /^mallory: --store \/etc\/hostname: \/etc\/hostname is not a directory/],
    [['--time', '0'], /^mallory: --time: /],
    [
      ['--system', 'etcd', '--faults', 'clock'],
      /^mallory: --faults clock: etcd's nodes do not read the wall clock through libc, so libfaketime cannot move it\n$/,
    ],
    [
      ['--system', 'dqlite', '--faults', 'disk'],
      /^mallory: --faults disk: dqlite does not take disk faults \(its adapter does not declare diskFaults, so its data dir is not put under the FUSE disk layer\)\n$/,
    ],
    [['--step', '0'], /^mallory: --step: /],
  ])('run %j', async (args, message) => {
    const b = newSandbox();
    const r = await mallory(['run', ...args], b, 20_000);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(registryFiles(b)).toEqual([]);
  });

  it.each([
    [
      '{"atMs": 100, "f": "lose-unfsynced-writes", "value": "one"}',
      [],
      /lose-unfsynced-writes at 100 ms: lose-unfsynced-writes is Jepsen's name for a fault Mallory calls lose-unfsynced: remove the line$/,
    ],
    [
      '{"atMs": 100, "f": "bump-clock", "value": {"target": "one", "deltaMs": -60000}}',
      ['--system', 'etcd'],
      /bump-clock at 100 ms: etcd's nodes do not read the wall clock through libc, so libfaketime cannot move it: remove the line$/,
    ],
    [
      '{"atMs": 100, "f": "lose-unfsynced", "value": "all"}',
      ['--system', 'dqlite'],
      /lose-unfsynced at 100 ms: dqlite does not take disk faults \(its adapter does not declare diskFaults, so its data dir is not put under the FUSE disk layer\): remove the line$/,
    ],
    [
      '{"atMs": 100, "f": "member-remove", "value": "one"}',
      ['--nodes', '2'],
      /member-remove at 100 ms: membership changes need at least 3 nodes: remove the line$/,
    ],
  ])(
    'a schedule with a fault the run cannot inject is refused before it starts: %s',
    async (line, flags, message) => {
      const b = newSandbox();
      const schedule = join(b.store, '..', 'unsupported.jsonl');
      writeFileSync(schedule, line + '\n');
      const r = await mallory(['run', '--schedule', schedule, ...flags, '--store', b.store], b, 20_000);
      expect(r.code).toBe(2);
      expect(r.stderr.trim()).toMatch(message);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(existsSync(b.store)).toBe(false);
    },
  );

  it('a transactional workload on a system without transactions is refused before it starts', async () => {
    const b = newSandbox();
    const r = await mallory(
      ['run', '--system', 'redis', '--workload', 'list-append', '--store', b.store],
      b,
      20_000,
    );
    expect(r.code).toBe(2);
    expect(r.stderr.trim()).toBe(
      'mallory: system redis does not run list-append transactions: use --workload register, set or counter',
    );
    expect(existsSync(b.store)).toBe(false);
  });

  it('a state dir that is a file: one line, and no run is created', async () => {
    const b = newSandbox();
    const r = await mallory(['run', '--time', '2s', '--store', b.store], {
      ...b,
      env: { ...b.env, MALLORY_STATE_DIR: '/etc/hostname' },
    });
    expect(r.code).toBe(2);
    expect(r.stderr.trim()).toMatch(/^mallory: MALLORY_STATE_DIR \/etc\/hostname: .* is not a directory/);
    expect(existsSync(b.store)).toBe(false);
  });

  it.skipIf(process.getuid?.() !== 0)(
    'namespaces asked for by a non-root user: one line, before any run dir exists',
    async () => {
      const b = newSandbox();
      const root = join(b.store, '..');
      chmodSync(root, 0o777);
      const r = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
        const child = spawn(
          process.execPath,
          [BIN, 'run', '--network', 'netns', '--time', '2s', '--store', b.store],
          { env: b.env, cwd: REPO, uid: 65534, gid: 65534, stdio: ['ignore', 'ignore', 'pipe'] },
        );
        let stderr = '';
        child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
        child.on('close', (code) => {
          resolve({ code, stderr });
        });
      });
      expect(r.code).toBe(2);
      expect(r.stderr.trim()).toMatch(/^mallory: network namespaces need root/);
      expect(existsSync(b.store) ? readdirSync(b.store) : []).toEqual([]);
    },
  );
});
