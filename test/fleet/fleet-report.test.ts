import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import { chromium } from '../_helpers/chromium.js';
import { parseArm, smallestP } from '../../src/campaign/compare.js';
import { fleetReportText } from '../../src/cli/_internals/fleet-text.js';
import { RunConfigSchema } from '../../src/campaign/config.js';
import { fleetReport } from '../../src/fleet/fleet-report.js';
import { buildPlan, defaultPlanFile, type Plan, writePlan } from '../../src/fleet/plan.js';
import { type IndexRecord, type RecordedFinding, writeRecord } from '../../src/fleet/records.js';
import { findingSignature } from '../../src/fleet/worker.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function planIn(seeds: number): Plan {
  const store = mkdtempSync(join(tmpdir(), 'mallory-fleet-report-'));
  dirs.push(store);
  const base = RunConfigSchema.parse({ system: 'kvraft', store, timeMs: 60_000 });
  const data = buildPlan(
    { base, arms: ['adaptive', 'random'].map(parseArm), seeds, seed: 10, id: 'r' },
    store,
  );
  return writePlan(data, defaultPlanFile(store, data.id));
}

function finding(
  plan: Plan,
  index: number,
  name: string,
  evidence: unknown,
  foundAtMs: number,
): RecordedFinding {
  const bug = { kind: 'linearizability' as const, name, evidence };
  return {
    kind: bug.kind,
    name,
    signature: findingSignature(bug),
    message: `${name} in campaign ${index}\nmore`,
    schedule: 0,
    foundAtMs,
    dir: join(plan.storeDir, `run-${index}`, 'bugs', '1'),
  };
}

function done(
  plan: Plan,
  index: number,
  states: number,
  findings: RecordedFinding[],
  pid = 100 + index,
): IndexRecord {
  const c = plan.campaigns[index];
  return {
    index,
    status: 'done',
    attempt: 1,
    host: 'h1',
    pid,
    startedAt: '2026-12-05T00:00:00.000Z',
    runDir: join(plan.storeDir, `run-${index}`),
    result: {
      seed: c.seed,
      runDir: join(plan.storeDir, `run-${index}`),
      metrics: { states_causal: states, bugs: findings.length },
      bugs: findings.map((f) => ({ name: `${f.kind}/${f.name}`, atMs: f.foundAtMs })),
    },
    findings,
  };
}

describe('fleetReport', () => {
  it("compares each arm's done runs and dedupes findings by signature across workers", () => {
    const plan = planIn(3);
    // Campaigns: 0 adaptive/10, 1 random/10, 2 adaptive/11, 3 random/11, 4 adaptive/12, 5 random/12.
    const stale = (i: number, at: number) => finding(plan, i, 'stale-read', { key: `k${i}`, read: i }, at);
    writeRecord(plan, done(plan, 0, 9, [stale(0, 5_000)]));
    writeRecord(plan, done(plan, 1, 4, []));
    writeRecord(
      plan,
      done(plan, 2, 11, [stale(2, 2_000), finding(plan, 2, 'stale-read', { key: 'x' }, 9_000)]),
    );
    writeRecord(plan, done(plan, 3, 5, [stale(3, 30_000)]));
    // A campaign still running: its findings are not the fleet's yet.
    writeRecord(plan, { ...done(plan, 4, 50, [stale(4, 1)]), status: 'running' });

    const report = fleetReport(plan);

    expect(report.status.counts).toMatchObject({ done: 4, abandoned: 1, pending: 1 });
    const group = report.groups[0];
    expect(group.group).toBe('all');
    const c = group.comparison!;
    expect(c.baseline).toBe('random');
    expect(c.policies.adaptive.runs.map((r) => r.seed)).toEqual([10, 11]);
    expect(c.policies.random.runs.map((r) => r.seed)).toEqual([10, 11]);
    const states = c.comparisons.find((m) => m.metric === 'states_causal' && m.policy === 'adaptive')!;
    expect(states.mean).toBe(10);
    expect(states.baselineMean).toBe(4.5);
    expect(states.a12).toBe(1);

    expect(report.findings).toHaveLength(2);
    const [common, other] = report.findings;
    // One signature for stale reads whose evidence has the same fields, whatever their values.
    expect(common.hits).toBe(3);
    expect(common.campaigns).toEqual([0, 2, 3]);
    expect(common.seeds).toEqual([10, 11]);
    expect(common.arms).toEqual(['adaptive', 'random']);
    expect(common.workers).toEqual(['h1:100', 'h1:102', 'h1:103']);
    expect(common.first).toMatchObject({ index: 2, foundAtMs: 2_000 });
    expect(common.first.replay).toContain(join(plan.storeDir, 'run-2', 'bugs', '1'));
    expect(common.message).toBe('stale-read in campaign 2\nmore');
    expect(other).toMatchObject({ hits: 1, campaigns: [2] });
    expect(other.signature).not.toBe(common.signature);

    const onDisk = JSON.parse(readFileSync(join(report.dir, 'results.json'), 'utf8')) as {
      findings: unknown[];
    };
    expect(onDisk.findings).toHaveLength(2);
    expect(existsSync(join(report.dir, 'all', 'compare.json'))).toBe(true);
    const html = readFileSync(join(report.dir, 'report.html'), 'utf8');
    expect(html).toContain('linearizability/stale-read');
    expect(html).toContain('campaign 2 at 2.0 s');
  });

  it("gives p-values no smaller than its sizes allow, warns in plan's terms, and links each campaign's report", () => {
    const plan = planIn(2);
    // Tied states, 4 and 4 against 3 and 3: the normal approximation said p = 0.194 here.
    writeRecord(plan, done(plan, 0, 4, []));
    writeRecord(plan, done(plan, 1, 3, []));
    writeRecord(plan, done(plan, 2, 4, []));
    writeRecord(plan, done(plan, 3, 3, []));

    const report = fleetReport(plan);

    const group = report.groups[0];
    const least = smallestP(2, 2);
    expect(least).toBeCloseTo(1 / 3, 12);
    for (const m of group.comparison!.comparisons) expect(m.p).toBeGreaterThanOrEqual(least - 1e-12);
    expect(group.warning).toContain('the smallest p these sizes allow is 0.333');
    expect(group.warning).toContain('--seeds 4');
    const text = fleetReportText(report);
    expect(text).toContain('--seeds 4 or more');
    expect(text).not.toContain('--runs');
    expect(text).not.toMatch(/ 0\.(19|22)\d\n/);
    const html = readFileSync(join(report.dir, 'report.html'), 'utf8');
    expect(html).toContain('the smallest p these sizes allow is 0.333');
    for (const i of [0, 1, 2, 3]) {
      const href = relative(report.dir, join(plan.storeDir, `run-${i}`, 'report.html'));
      expect(href.startsWith('../')).toBe(true);
      expect(html).toContain(`href="${href}"`);
    }
  });

  it('renders in a real browser: the findings, each comparison and its numbers', async () => {
    const plan = planIn(2);
    const stale = finding(plan, 0, 'stale-read', { key: 'k0' }, 4_000);
    writeRecord(plan, done(plan, 0, 9, [stale]));
    writeRecord(plan, done(plan, 1, 4, []));
    writeRecord(plan, done(plan, 2, 11, []));
    writeRecord(plan, done(plan, 3, 5, []));
    const report = fleetReport(plan);

    const dom = await chromium(['--dump-dom', `file://${join(report.dir, 'report.html')}`]);

    expect(dom).toContain('<h1>Fleet r</h1>');
    expect(dom).toMatch(/4 campaigns: 4 done\. 1 findings, 1 distinct\./);
    expect(dom).toContain('<b>linearizability/stale-read</b>');
    expect(dom).toContain('campaign 0 at 4.0 s');
    // The comparison's row: adaptive's mean states 10 against random's 4.5, Â12 1.00.
    expect(dom).toMatch(
      /<td>states_causal<\/td><td>adaptive<\/td><td>10\.00<\/td><td>4\.50<\/td><td>2\.22<\/td><td>1\.00<\/td>/,
    );
    expect(dom).toContain('<svg');
    expect(dom).toContain('no difference can be significant');
    expect(dom).toMatch(/<a href="\.\.\/\.\.\/\.\.\/run-0\/report\.html">adaptive, seed 10<\/a>/);
  }, 120_000);

  it('one comparison per bug switch, and a group with nothing done says so', () => {
    const store = mkdtempSync(join(tmpdir(), 'mallory-fleet-report-'));
    dirs.push(store);
    const base = RunConfigSchema.parse({ system: 'kvraft', store });
    const data = buildPlan(
      {
        base,
        arms: ['adaptive', 'random'].map(parseArm),
        seeds: 1,
        seed: 1,
        eachBug: ['stale-read', 'lazy-vote'],
        id: 'b',
      },
      store,
    );
    const plan = writePlan(data, defaultPlanFile(store, data.id));
    expect(plan.campaigns.map((c) => c.group)).toEqual([
      'bug=stale-read',
      'bug=stale-read',
      'bug=lazy-vote',
      'bug=lazy-vote',
    ]);
    writeRecord(plan, done(plan, 0, 3, []));
    writeRecord(plan, done(plan, 1, 2, []));

    const report = fleetReport(plan);

    expect(report.groups.map((g) => g.group)).toEqual(['bug=lazy-vote', 'bug=stale-read']);
    expect(report.groups[0].comparison).toBeUndefined();
    expect(report.groups[1].comparison?.policies.adaptive.runs).toHaveLength(1);
    expect(report.findings).toEqual([]);
  });
});
