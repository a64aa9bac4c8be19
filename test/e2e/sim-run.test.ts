import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';

import type { BugRecord } from '../../src/campaign/bug.js';
import type { RunSummary } from '../../src/campaign/reporter.js';
import { disposeSandbox, jsonOf, mallory, type Sandbox, sandbox } from './helpers.js';

/** Short: one schedule of 12 steps of 2.5 s and its checks, in virtual time. */
const TIME = '30s';

/** What a simulated run wrote that its seed decides: the history, every node's output, the states. */
function fingerprint(runDir: string): { history: string; nodes: string; states: string } {
  const sha = (data: string | Buffer): string => createHash('sha256').update(data).digest('hex');
  const nodes = createHash('sha256');
  for (const node of readdirSync(join(runDir, 'nodes')).sort()) {
    for (const file of ['stdout.log', 'stderr.log', 'probe.jsonl']) {
      const path = join(runDir, 'nodes', node, file);
      if (existsSync(path)) nodes.update(`${node}/${file}\n`).update(readFileSync(path));
    }
  }
  const db = new Database(join(runDir, 'run.db'), { readonly: true });
  try {
    const states = db
      .prepare('SELECT abstraction, id, features, visits FROM states ORDER BY abstraction, id')
      .all();
    return {
      history: sha(readFileSync(join(runDir, 'history.jsonl'))),
      nodes: nodes.digest('hex'),
      states: sha(JSON.stringify(states)),
    };
  } finally {
    db.close();
  }
}

/**
 * A simulated run's results.json without what differs between two runs of one seed by design:
 * paths (the store's), and what the run cost in real time.
 */
function seededResults(runDir: string): { sim: { digest: string }; run: { startedAt: string } } {
  const text = readFileSync(join(runDir, 'results.json'), 'utf8').replaceAll(dirname(runDir), '<store>');
  const results = JSON.parse(text) as {
    sim: { digest: string };
    run: { startedAt: string; config: Record<string, unknown> };
    coverage: Record<string, number>;
    schedules: { checkers: { ms: number | null }[] }[];
  };
  delete results.run.config.store;
  const costs = new Set(['fuzzer_peak_rss_mb', 'sim_wall_s', 'sim_speedup']);
  results.coverage = Object.fromEntries(Object.entries(results.coverage).filter(([k]) => !costs.has(k)));
  for (const s of results.schedules) for (const c of s.checkers) c.ms = null;
  return results;
}

describe('mallory run --sim (kvraft in the simulated world, on virtual time)', () => {
  const boxes: Sandbox[] = [];
  const box = (): Sandbox => {
    const b = sandbox();
    boxes.push(b);
    return b;
  };
  afterEach(() => {
    for (const b of boxes.splice(0)) disposeSandbox(b);
  });

  it('writes the same history, node output and states for a seed in three fresh processes; another seed differs', async () => {
    const runs = await Promise.all(
      [7, 7, 7, 8].map(async (seed) => {
        const b = box();
        const r = await mallory(
          ['run', '--sim', '--seed', String(seed), '--time', TIME, '--store', b.store, '--json'],
          b,
        );
        const summary = jsonOf(r) as RunSummary;
        expect(r.code).toBe(0);
        return summary;
      }),
    );
    const [a, b, c, other] = runs.map((s) => fingerprint(s.runDir));
    // The run dir is named after the virtual start and the seed, and results.json is the same but
    // for the store's path and what the run cost in real time (memory, wall seconds, check times).
    expect(runs.map((s) => basename(s.runDir))).toEqual([
      ...Array<string>(3).fill('20260101T000000-000Z-sim-C2-7'),
      '20260101T000000-000Z-sim-C2-8',
    ]);
    const [ra, rb, rc, rother] = runs.map((s) => seededResults(s.runDir));
    expect(ra.sim.digest).toMatch(/^[0-9a-f]{64}$/);
    expect(rb).toEqual(ra);
    expect(rc).toEqual(ra);
    expect(rother.sim.digest).not.toBe(ra.sim.digest);
    expect(ra.run.startedAt).toBe('2026-01-01T00:00:00.000Z');
    expect(a.history).not.toBe(createHash('sha256').update('').digest('hex'));
    expect(b).toEqual(a);
    expect(c).toEqual(a);
    expect(other.history).not.toBe(a.history);
    for (const s of runs) {
      expect(s.status).toBe('complete');
      expect(s.schedules).toBeGreaterThanOrEqual(1);
      expect(s.ops.ok).toBeGreaterThan(100);
      // The run's figures: virtual seconds (its --time and its last checks) and the wall seconds they took.
      expect(s.metrics.sim_virtual_s).toBeGreaterThanOrEqual(30);
      expect(s.metrics.sim_wall_s).toBeGreaterThan(0);
      const results = JSON.parse(readFileSync(join(s.runDir, 'results.json'), 'utf8')) as {
        run: { config: { sim?: { contract: string } } };
      };
      expect(results.run.config.sim).toEqual({ contract: 'C2' });
    }
  });

  it('finds stale-read with seed 1, says the bug is simulated, and its replay reproduces it exactly', async () => {
    const b = box();
    const found = await mallory(
      ['run', '--sim', '--seed', '1', '--bug', 'stale-read', '--time', TIME, '--store', b.store, '--json'],
      b,
    );
    const summary = jsonOf(found) as RunSummary;
    expect(summary.bugs.map((x) => x.kind)).toContain('linearizability');
    const bug = summary.bugs.find((x) => x.kind === 'linearizability') as BugRecord;
    expect(bug.simulated).toEqual({ seed: 1, contract: 'C2', partitions: 'proxy' });
    const header = JSON.parse(readFileSync(join(bug.dir, 'schedule.jsonl'), 'utf8').split('\n')[0]) as {
      mallory: { simulated?: unknown };
    };
    expect(header.mallory.simulated).toEqual({ seed: 1, contract: 'C2', partitions: 'proxy' });
    // One replay tells for a simulated bug: the terminal and results.json print it without --repeat.
    expect(found.stderr).toContain(`replay:   ./bin/mallory.js replay ${bug.dir}\n`);
    const results = JSON.parse(readFileSync(join(dirname(dirname(bug.dir)), 'results.json'), 'utf8')) as {
      bugs: { dir: string; replay: string }[];
    };
    expect(results.bugs.find((x) => x.dir === bug.dir)?.replay).toBe(`mallory replay ${bug.dir}`);

    const replayed = await mallory(['replay', bug.dir, '--repeat', '2', '--store', b.store, '--json'], b);
    const replay = jsonOf(replayed) as {
      reproduced: number;
      tries: readonly { reproduced: boolean; runDir: string }[];
    };
    expect(replay.reproduced).toBe(2);
    expect(replayed.stderr).toContain('exact replay');
    const [first, second] = replay.tries.map((t) => fingerprint(t.runDir));
    expect(second).toEqual(first);

    // Shrinking it needs no --repeat: one try of each candidate tells, and the shrunk schedule's
    // replay is printed without one.
    const shrunk = await mallory(['shrink', bug.dir, '--store', b.store], b);
    expect(shrunk.code, shrunk.stderr).toBe(0);
    expect(shrunk.stderr).toContain('1 try (exact) per candidate');
    expect(shrunk.stderr).toMatch(/reproduced 1\/1/);
    expect(shrunk.stdout).toContain(`replay: ./bin/mallory.js replay ${join(bug.dir, 'shrunk.jsonl')}\n`);

    // The simulator's finding, confirmed on real processes: the same schedule, switch and seed on
    // real kvraft nodes (a real run can differ, so up to three tries; it reproduced 3/3 here).
    const real = await mallory(
      ['replay', bug.dir, '--real', '--repeat', '3', '--store', b.store, '--json'],
      b,
    );
    const onReal = jsonOf(real) as { reproduced: number; tries: readonly { runDir: string }[] };
    expect(real.stderr).toContain('replayed on real processes');
    expect(onReal.reproduced).toBeGreaterThan(0);
    for (const t of onReal.tries) expect(t.runDir).not.toContain('sim-');
    // A bug of a real run (a real try's own record) already replays on real processes: --real is
    // refused in one line.
    const realTry = onReal.tries.find((t) => existsSync(join(t.runDir, 'bugs', '1', 'schedule.jsonl')));
    expect(realTry).toBeDefined();
    const realBug = join((realTry as { runDir: string }).runDir, 'bugs', '1');
    const refused = await mallory(['replay', realBug, '--real'], b);
    expect(refused.code).toBe(2);
    expect(refused.stderr.trim().split('\n')).toEqual([
      `mallory: --real: ${realBug} is not a simulated bug; it already replays on real processes (drop --real)`,
    ]);
  });

  it("replays a finding of a later schedule exactly: the run's schedules before it re-run as they ran", async () => {
    const b = box();
    // read-index-before-term-commit, random policy, seed 2: found in schedule 9 (index 8), at 286.7
    // virtual s. Replayed from a new world, schedule 9 alone does not find it (its state and keys
    // are those of a first schedule); after the eight before it, re-run, it is the same run.
    const args = ['run', '--sim', '--bug', 'read-index-before-term-commit', '--policy', 'random'];
    const found = await mallory(
      [...args, '--seed', '2', '--time', '10m', '--stop-on-bug', '--store', b.store, '--json'],
      b,
    );
    const summary = jsonOf(found) as RunSummary;
    const bug = summary.bugs.find((x) => x.kind === 'linearizability') as BugRecord;
    expect(bug.schedule).toBe(8);
    const replayed = await mallory(['replay', bug.dir, '--store', b.store, '--json'], b);
    expect(replayed.stderr).toContain("start: after the run's first 8 schedule(s), re-run as they ran");
    const replay = jsonOf(replayed) as { reproduced: number; tries: readonly { runDir: string }[] };
    expect(replay.reproduced).toBe(1);
    // The same history, op for op, and the same world.
    const original = dirname(dirname(bug.dir));
    const again = replay.tries[0].runDir;
    expect(readFileSync(join(again, 'history.jsonl'), 'utf8')).toBe(
      readFileSync(join(original, 'history.jsonl'), 'utf8'),
    );
    const digest = (dir: string): unknown =>
      (JSON.parse(readFileSync(join(dir, 'results.json'), 'utf8')) as { sim: { digest: string } }).sim.digest;
    expect(digest(again)).toBe(digest(original));
  });

  it('takes the disk family: ack-before-fsync is found where the disks keep only what was fsynced (C2, C3), hidden where every write is durable at once (C1)', async () => {
    // The switch's needs (the default families and disk), as `kvraftBugArgs` gives them.
    const faults = 'partition,kill,pause,packet,member,disk';
    const outcomes = await Promise.all(
      (['C1', 'C2', 'C3'] as const).map(async (contract) => {
        const b = box();
        const r = await mallory(
          [
            'run',
            '--sim',
            '--sim-contract',
            contract,
            '--bug',
            'ack-before-fsync',
            '--faults',
            faults,
            '--seed',
            '1',
            '--time',
            '2m',
            '--stop-on-bug',
            '--store',
            b.store,
            '--json',
          ],
          b,
        );
        return { contract, code: r.code, summary: jsonOf(r) as RunSummary };
      }),
    );
    const kinds = Object.fromEntries(outcomes.map((o) => [o.contract, o.summary.bugs.map((x) => x.kind)]));
    expect(kinds).toEqual({ C1: [], C2: ['durability'], C3: ['durability'] });
    expect(outcomes.map((o) => o.code)).toEqual([0, 1, 1]);
    // The disk faults were the world's: a crash of the disks that lost what was not fsynced.
    for (const o of outcomes.slice(1))
      expect(o.summary.bugs[0].message).toMatch(/disks lost unfsynced writes/);
  });

  it('refuses --sim for another system and with --hosts, in one line, before a run exists', async () => {
    const b = box();
    const other = await mallory(['run', '--sim', '--system', 'etcd', '--store', b.store], b);
    expect(other.code).toBe(2);
    expect(other.stderr.trim().split('\n')).toEqual([
      "mallory: --sim: the simulator runs kvraft's own node code only, not etcd: drop --sim or use --system kvraft",
    ]);
    const hosts = await mallory(['run', '--sim', '--hosts', 'h1,h2,h3', '--store', b.store], b);
    expect(hosts.code).toBe(2);
    expect(hosts.stderr.trim()).toBe('mallory: --sim: the nodes run in this process: drop --hosts');
    // A slow disk costs CPU time, which the world does not have: a schedule's slow-disk line is refused.
    const schedule = join(b.store, '..', 'slow.jsonl');
    writeFileSync(schedule, '{"atMs": 1000, "f": "slow-disk", "value": {"target": "one", "delayMs": 50}}\n');
    const slow = await mallory(['run', '--sim', '--schedule', schedule, '--store', b.store], b);
    expect(slow.code).toBe(2);
    expect(slow.stderr.trim().split('\n')).toEqual([
      `mallory: --sim: ${schedule}: slow-disk at 1000 ms is not simulated (a slow disk costs CPU time, which is zero in the simulator): remove the line`,
    ]);
    expect(existsSync(b.store)).toBe(false);
  });
});
