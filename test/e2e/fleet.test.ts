import { spawn } from 'node:child_process';
import { cpSync, existsSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';

import { describe, expect, it } from 'vitest';

import {
  BIN,
  jsonOf,
  mallory,
  malloryJson,
  processesMentioning,
  REPO,
  registryFiles,
  type Sandbox,
  waitFor,
  useSandboxes,
} from './helpers.js';
import { planOf, recordOf } from './fleet-helpers.js';

function runDirs(box: Sandbox): string[] {
  const dir = join(box.store, 'kvraft');
  return existsSync(dir) ? readdirSync(dir).filter((d) => /^\d{8}T/.test(d)) : [];
}

describe('a fleet of kvraft campaigns (real processes)', () => {
  const newSandbox = useSandboxes();

  it('runs a plan with two workers; killed midway and run again, every index finishes exactly once', async () => {
    const box = newSandbox();
    const plan = planOf(box, 'resume');
    // The fleet is SIGKILLed once both first campaigns are under way: its workers see their stdin
    // close, stop and remove what they made.
    const fleet = spawn(process.execPath, [BIN, 'fleet', 'run', plan, '--workers', '2'], {
      env: box.env,
      cwd: REPO,
    });
    let fleetErr = '';
    fleet.stderr.on('data', (d: Buffer) => (fleetErr += d.toString()));
    await waitFor(
      () => recordOf(plan, 0)?.runDir !== undefined && recordOf(plan, 1)?.runDir !== undefined,
      60_000,
    );
    const firstRuns = [recordOf(plan, 0)!.runDir!, recordOf(plan, 1)!.runDir!];
    fleet.kill('SIGKILL');
    await waitFor(() => processesMentioning(plan).length === 0, 60_000);
    const stopped = jsonOf(malloryJson(['fleet', 'status', plan, '--json'], box)) as {
      counts: Record<string, number>;
    };
    expect(stopped.counts.done).toBe(0);
    expect(stopped.counts.interrupted + stopped.counts.abandoned).toBe(2);
    expect(stopped.counts.pending).toBe(2);
    expect(fleetErr).toContain('start campaign 0');

    const again = await mallory(['fleet', 'run', plan, '--workers', '2'], box);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toContain('4 campaigns: 4 done');
    for (const index of [0, 1]) {
      const record = recordOf(plan, index)!;
      expect(record.status).toBe('done');
      expect(record.attempt).toBe(2);
      expect(record.replaced).toEqual([firstRuns[index]]);
      expect(existsSync(firstRuns[index])).toBe(false);
    }
    for (const index of [2, 3]) expect(recordOf(plan, index)).toMatchObject({ status: 'done', attempt: 1 });
    // Exactly one run dir per index: the unfinished ones were replaced, none duplicated.
    const dirs = runDirs(box);
    expect(dirs).toHaveLength(4);
    expect(new Set([0, 1, 2, 3].map((i) => recordOf(plan, i)!.runDir!.split('/').pop()))).toEqual(
      new Set(dirs),
    );
    for (const i of [0, 1, 2, 3]) {
      const marker = JSON.parse(readFileSync(join(recordOf(plan, i)!.runDir!, 'fleet.json'), 'utf8')) as {
        index: number;
      };
      expect(marker.index).toBe(i);
    }

    // A third run starts nothing: every index is done.
    const third = await mallory(['fleet', 'run', plan, '--workers', '2'], box);
    expect(third.code).toBe(0);
    expect(third.stderr).toContain('4 of 4 campaigns done or running elsewhere');
    expect(runDirs(box)).toHaveLength(4);

    // The merged report has compare's shape, for every comparison of the plan.
    const compareKeys = [
      'baseline',
      'comparisons',
      'dir',
      'plot',
      'policies',
      'system',
      'timeMs',
      'timeToBug',
      'workload',
    ];
    const report = jsonOf(malloryJson(['fleet', 'report', plan, '--json'], box)) as {
      groups: { group: string; comparison: Record<string, unknown>; unionStates: Record<string, number> }[];
      findings: unknown[];
      dir: string;
    };
    expect(report.groups.map((g) => g.group)).toEqual(['all']);
    expect(Object.keys(report.groups[0].comparison).sort()).toEqual(compareKeys);
    const policies = report.groups[0].comparison.policies as Record<string, { runs: unknown[] }>;
    expect(Object.keys(policies)).toEqual(['adaptive', 'random']);
    expect(policies.adaptive.runs).toHaveLength(2);
    expect(report.groups[0].unionStates.causal).toBeGreaterThan(0);
    expect(existsSync(join(report.dir, 'report.html'))).toBe(true);
    expect(existsSync(join(report.dir, 'all', 'compare.json'))).toBe(true);
    // `compare --from` reads the fleet's comparison as one of its own.
    const merged = malloryJson(
      ['compare', '--from', join(report.dir, 'all'), '--store', box.store, '--json'],
      box,
    );
    expect(merged.code, merged.stderr).toBe(0);

    // The store copied to another path (a volume mounted elsewhere) gives the same report, from
    // its own runs: with the original moved away, and with it in place.
    const copy = join(box.store, '..', 'mounted-elsewhere');
    cpSync(box.store, copy, { recursive: true });
    const copiedPlan = join(copy, relative(box.store, plan));
    const reportOf = (file: string): typeof report & { text: string } => {
      const r = malloryJson(['fleet', 'report', file, '--json'], box);
      expect(r.code, r.stderr).toBe(0);
      return { ...(jsonOf(r) as typeof report), text: r.stdout };
    };
    const comparable = (r: typeof report): unknown => ({
      unionStates: r.groups.map((g) => g.unionStates),
      comparisons: r.groups.map((g) => g.comparison.comparisons),
      findings: r.findings.length,
    });
    const aside = join(box.store, '..', 'original-moved-away');
    renameSync(box.store, aside);
    const alone = reportOf(copiedPlan);
    renameSync(aside, box.store);
    const beside = reportOf(copiedPlan);
    for (const copied of [alone, beside]) {
      expect(comparable(copied)).toEqual(comparable(report));
      expect(copied.groups[0].unionStates.causal).toBeGreaterThan(0);
      expect(copied.text).not.toContain(`${box.store}/`);
    }

    expect(registryFiles(box)).toEqual([]);
    expect(processesMentioning(box.store)).toEqual([]);
  });

  it('two campaigns sharing an exchange directory take what the other learned while they run', async () => {
    const box = newSandbox();
    const exchange = join(box.store, 'exchange');
    const args = (seed: string): string[] => [
      'run',
      '--time',
      '24s',
      '--steps',
      '4',
      '--step',
      '1s',
      '--seed',
      seed,
      '--exchange',
      exchange,
      '--store',
      box.store,
      '--json',
    ];
    const [one, two] = await Promise.all([mallory(args('1'), box), mallory(args('2'), box)]);
    expect(one.code, one.stderr).toBe(0);
    expect(two.code, two.stderr).toBe(0);
    const runs = [one, two].map((r) => (jsonOf(r) as { runDir: string }).runDir);
    expect(readdirSync(exchange).filter((f) => f.endsWith('.json'))).toHaveLength(2);
    for (const [i, runDir] of runs.entries()) {
      const took = readFileSync(join(runDir, 'exchange.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { from: string; runDir: string; values: number; states: number });
      // Each took from the other (and only from the other), policy values and states both.
      expect(new Set(took.map((t) => t.runDir))).toEqual(new Set([runs[1 - i]]));
      expect(took.reduce((n, t) => n + t.values, 0)).toBeGreaterThan(0);
      expect(took.reduce((n, t) => n + t.states, 0)).toBeGreaterThan(0);
      expect(readFileSync(join(runDir, 'mallory.log'), 'utf8')).toMatch(/exchange: took \d+ policy values/);
    }
    expect(registryFiles(box)).toEqual([]);
  });

  it('a worker runs the index its engine gives it, once; bad plans and busy indices get one line and exit 2', async () => {
    const box = newSandbox();
    const plan = planOf(box, 'worker');
    const env = { ...box.env, JOB_COMPLETION_INDEX: '3' };
    const first = await mallory(['run', '--plan', plan], { ...box, env });
    expect(first.code, first.stderr).toBe(0);
    expect(first.stderr).toContain('campaign 3 of 4 (all, random, seed 4)');
    expect(recordOf(plan, 3)).toMatchObject({ status: 'done', attempt: 1 });
    // The campaign's own time at its end: where the fleet report censors a campaign that found nothing.
    expect(recordOf(plan, 3)!.elapsedMs).toBeGreaterThanOrEqual(8_000);
    for (const i of [0, 1, 2]) expect(recordOf(plan, i)).toBeUndefined();
    // A retried pod of a done index runs nothing.
    const retried = await mallory(['run', '--plan', plan], { ...box, env });
    expect(retried.code).toBe(0);
    expect(retried.stderr).toContain('finished before');
    expect(runDirs(box)).toHaveLength(1);

    // A second worker on an index a live worker holds is refused, and the first is untouched.
    const holder = mallory(['run', '--plan', plan, '--index', '0'], box);
    await waitFor(() => existsSync(join(plan, '..', 'campaigns', '0.lock')), 30_000);
    const second = malloryJson(['run', '--plan', plan, '--index', '0'], box);
    expect(second.code).toBe(2);
    expect(second.stderr.trim().split('\n')).toHaveLength(1);
    expect(second.stderr).toMatch(/campaign 0 of .* is being run by pid \d+/);
    const held = await holder;
    expect(held.code, held.stderr).toBe(0);
    expect(recordOf(plan, 0)).toMatchObject({ status: 'done', attempt: 1 });

    const bad = (args: readonly string[], pattern: RegExp): void => {
      const r = malloryJson(args, box);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stderr).not.toContain('    at ');
      expect(r.stderr).toMatch(pattern);
    };
    bad(['run', '--plan', plan, '--index', '4'], /--index 4 is out of range: .* has campaigns 0 to 3/);
    bad(['run', '--plan', plan], /--plan needs the campaign to run: --index N, or JOB_COMPLETION_INDEX/);
    bad(['run', '--plan', plan, '--index', '1', '--time', '5s'], /--time cannot be given with --plan/);
    bad(
      ['run', '--plan', join(box.store, 'nope.json'), '--index', '0'],
      /does not exist: write one with `mallory plan`/,
    );
    bad(['plan', '--system', 'nope', '--store', box.store], /unknown system "nope"/);
    bad(['plan', '--bug', 'nope', '--store', box.store], /unknown bug "nope" for kvraft/);
    const file = join(box.store, 'a-file');
    writeFileSync(file, '');
    bad(
      ['plan', '--store', join(file, 'store')],
      /plan: the plan's folder in the store, .*: .*a-file is not a directory/,
    );
    // A plan edited by hand to name a system this host does not have: the worker refuses it.
    const edited = JSON.parse(readFileSync(plan, 'utf8')) as { campaigns: { config: { system: string } }[] };
    edited.campaigns[1].config.system = 'nope';
    writeFileSync(plan, JSON.stringify(edited));
    bad(['run', '--plan', plan, '--index', '1'], /unknown system "nope"/);
    expect(recordOf(plan, 3)).toMatchObject({ status: 'done' });
    expect(registryFiles(box)).toEqual([]);
  });
});
