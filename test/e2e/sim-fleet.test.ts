import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { explainExit, jsonOf, mallory, malloryJson, useSandboxes } from './helpers.js';
import { recordOf } from './fleet-helpers.js';

interface ComparedRun {
  readonly seed: number;
  readonly runDir: string;
  readonly metrics: Record<string, number>;
  readonly bugs: readonly { readonly name: string; readonly atMs: number }[];
}

interface Compared {
  readonly policies: Record<string, { readonly runs: readonly ComparedRun[] }>;
  readonly comparisons: readonly { readonly metric: string }[];
  readonly timeToBug: Record<string, Record<string, { found: number; runs: number }>>;
}

/** The simulated-disk setting a run was stored with. */
function simOf(runDir: string): unknown {
  const results = JSON.parse(readFileSync(join(runDir, 'results.json'), 'utf8')) as {
    run: { config: { sim?: unknown } };
  };
  return results.run.config.sim;
}

/** What a simulated campaign's seed decides, as a comparison keeps it (no wall-clock figures). */
function seeded(run: ComparedRun): unknown {
  const { metrics } = run;
  return {
    seed: run.seed,
    bugs: run.bugs,
    states: metrics.states_causal,
    pairs: metrics.intra_pairs,
    windows: metrics.windows,
    auc: metrics.states_causal_auc,
  };
}

describe('comparisons in the simulator: compare --sim, plan --sim with fleet run and fleet report', () => {
  const newSandbox = useSandboxes();

  it('runs a plan of 2 policies × 3 seeds × 1 virtual minute with local workers; the fleet report merges them', async () => {
    const box = newSandbox();
    const planned = malloryJson(
      [
        'plan',
        '--sim',
        '--policies',
        'adaptive,random',
        '--seeds',
        '3',
        '--seed',
        '1',
        '--time',
        '1m',
        '--bug',
        'stale-read',
        '--store',
        box.store,
        '--id',
        'sim',
        '--json',
      ],
      box,
    );
    expect(planned.code, planned.stderr).toBe(0);
    const plan = jsonOf(planned) as { file: string; campaigns: { config: { sim?: unknown } }[] };
    expect(plan.campaigns).toHaveLength(6);
    for (const c of plan.campaigns) expect(c.config.sim).toEqual({ contract: 'C2' });

    const fleet = await mallory(['fleet', 'run', plan.file, '--workers', '2'], box);
    expect(fleet.code, explainExit(fleet)).toBe(0);
    expect(fleet.stderr).toContain('6 campaigns: 6 done');
    for (let i = 0; i < 6; i++) expect(simOf(recordOf(plan.file, i)!.runDir!)).toEqual({ contract: 'C2' });

    const report = jsonOf(malloryJson(['fleet', 'report', plan.file, '--json'], box)) as {
      groups: { group: string; comparison: Compared; unionStates: Record<string, number> }[];
      findings: {
        kind: string;
        name: string;
        hits: number;
        first: { dir: string; simulated: boolean; replay: string };
      }[];
    };
    expect(report.groups.map((g) => g.group)).toEqual(['all']);
    const { comparison } = report.groups[0];
    expect(Object.keys(comparison.policies).sort()).toEqual(['adaptive', 'random']);
    for (const side of ['adaptive', 'random']) {
      expect(comparison.policies[side].runs.map((r) => r.seed).sort()).toEqual([1, 2, 3]);
    }
    expect(report.groups[0].unionStates.causal).toBeGreaterThan(0);
    // stale-read is found in the simulator within a virtual minute by some campaign of the six
    // (seed 1 adaptive and seed 2 random here): a finding merged across workers, timed per side.
    expect(report.findings.map((f) => `${f.kind}/${f.name}`)).toContain('linearizability/not-linearizable');
    // A simulated finding replays exactly: its command asks for one try, in the JSON and the text.
    const text = malloryJson(['fleet', 'report', plan.file], box).stdout;
    for (const f of report.findings) {
      expect(f.first.simulated).toBe(true);
      expect(f.first.replay).toBe(`mallory replay ${f.first.dir}`);
      expect(text).toContain(` replay ${f.first.dir}\n`);
    }
    expect(text).not.toContain('--repeat');
    const found = Object.values(comparison.timeToBug).reduce((n, bugs) => n + (bugs['(any)']?.found ?? 0), 0);
    expect(found).toBeGreaterThan(0);
    // The simulator's speed is not a policy's coverage: its wall seconds are a cost, the rest not compared.
    const metrics = comparison.comparisons.map((c) => c.metric);
    expect(metrics).toContain('sim_wall_s');
    expect(metrics).not.toContain('sim_speedup');
    expect(metrics).not.toContain('sim_virtual_s');
  });

  it('compare --sim runs every side in the simulator; the same comparison again gives the same runs', async () => {
    const box = newSandbox();
    const args = [
      'compare',
      '--sim',
      '--sim-contract',
      'C3',
      '--policies',
      'adaptive,random',
      '--runs',
      '2',
      '--time',
      '20s',
      '--seed',
      '5',
      '--store',
      box.store,
      '--json',
    ];
    const first = await mallory(args, box);
    expect(first.code, explainExit(first)).toBe(0);
    expect(first.stderr).toContain('in the simulator (disks C3)');
    const second = await mallory(args, box);
    expect(second.code, explainExit(second)).toBe(0);
    const [a, b] = [first, second].map((r) => jsonOf(r) as Compared);
    for (const side of ['adaptive', 'random']) {
      expect(a.policies[side].runs).toHaveLength(2);
      for (const run of a.policies[side].runs) {
        expect(simOf(run.runDir)).toEqual({ contract: 'C3' });
        expect(run.metrics.sim_virtual_s).toBeGreaterThanOrEqual(20);
      }
      expect(b.policies[side].runs.map(seeded)).toEqual(a.policies[side].runs.map(seeded));
    }
  });

  it('a side that shares (+exchange) runs in the simulator: its second campaign takes what the first learned', async () => {
    const box = newSandbox();
    const args = [
      'compare',
      '--sim',
      '--policies',
      'adaptive+exchange,random',
      '--runs',
      '2',
      '--time',
      '1m',
    ];
    const r = await mallory([...args, '--seed', '3', '--store', box.store, '--json'], box);
    expect(r.code, explainExit(r)).toBe(0);
    const compared = jsonOf(r) as Compared;
    const [first, second] = compared.policies['adaptive+exchange'].runs.map((run) => run.runDir);
    // The sides run one campaign after another: the second took the first's values and states.
    const took = readFileSync(join(second, 'exchange.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { runDir: string; values: number; states: number });
    expect(took.map((t) => t.runDir)).toEqual([first]);
    expect(took[0].values).toBeGreaterThan(0);
    expect(took[0].states).toBeGreaterThan(0);
    // The side that does not share took nothing.
    for (const run of compared.policies['random'].runs)
      expect(existsSync(join(run.runDir, 'exchange.jsonl'))).toBe(false);
  });

  it('refuses in one line, before a plan or run exists, what the simulator cannot do', async () => {
    const box = newSandbox();
    const refusals: [readonly string[], string][] = [
      [
        ['plan', '--sim', '--system', 'etcd'],
        "mallory: --sim: the simulator runs kvraft's own node code only, not etcd: drop --sim or use --system kvraft",
      ],
      [
        ['compare', '--sim-contract', 'C3'],
        'mallory: --sim-contract is a setting of the simulated disk: add --sim',
      ],
    ];
    for (const [args, line] of refusals) {
      const r = await mallory([...args, '--store', box.store], box);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr.trim().split('\n')).toEqual([line]);
    }
    expect(existsSync(box.store)).toBe(false);
  });
});
