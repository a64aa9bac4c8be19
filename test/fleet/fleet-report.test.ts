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
import { RunStore } from '../../src/store/run-store.js';

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
    // A campaign whose run found it in 4 schedules: one finding with 4 hits.
    writeRecord(plan, done(plan, 3, 5, [{ ...stale(3, 30_000), hits: 4 }]));
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
    expect(common.hits).toBe(6);
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
    // These records name runs that are not in the store: no states over time to show.
    expect(text).toContain("distinct states over time: no campaign's run database is in this store");
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

  describe('time to bug and states over time, per bug switch', () => {
    const BUDGET_MS = 60_000;
    /** Each campaign: its first find (null: none), its end, and its states at 15, 30, 45 and 60 s. */
    const CAMPAIGNS: readonly { find: number | null; endMs: number; states: readonly number[] }[] = [
      { find: 5_000, endMs: 5_000, states: [2, 4, 6, 8] }, // 0 adaptive, seed 1
      { find: 40_000, endMs: 40_000, states: [1, 2, 3, 4] }, // 1 random, seed 1
      { find: 20_000, endMs: 20_000, states: [3, 6, 9, 12] }, // 2 adaptive, seed 2
      { find: null, endMs: 30_000, states: [1, 1, 2, 2] }, // 3 random, seed 2: ended early, no find
      { find: null, endMs: BUDGET_MS, states: [1, 2, 3, 4] }, // 4 adaptive, seed 3
      { find: null, endMs: BUDGET_MS, states: [2, 3, 4, 5] }, // 5 random, seed 3
    ];

    /** A plan of adaptive and random × 3 seeds on one bug switch, every campaign done with a real run database. */
    function survivalPlan(): Plan {
      const store = mkdtempSync(join(tmpdir(), 'mallory-fleet-report-'));
      dirs.push(store);
      const base = RunConfigSchema.parse({ system: 'kvraft', store, timeMs: BUDGET_MS });
      const data = buildPlan(
        {
          base,
          arms: ['adaptive', 'random'].map(parseArm),
          seeds: 3,
          seed: 1,
          eachBug: ['ack-before-commit'],
          id: 's',
        },
        store,
      );
      const plan = writePlan(data, defaultPlanFile(store, data.id));
      CAMPAIGNS.forEach((c, index) => {
        const campaign = plan.campaigns[index];
        const run = RunStore.create(store, {
          id: `c${index}`,
          system: 'kvraft',
          seed: campaign.seed,
          policy: campaign.arm,
          config: campaign.config,
        });
        c.states.forEach((states, i) => {
          run.metrics((i + 1) * 15_000, 0, i, { states_causal: states });
        });
        run.close();
        const findings =
          c.find === null
            ? []
            : [
                {
                  ...finding(plan, index, 'not-linearizable', { key: 'k' }, c.find),
                  dir: join(run.dir, 'bugs', '1'),
                },
              ];
        writeRecord(plan, {
          ...done(plan, index, c.states[3], findings),
          runDir: run.dir,
          elapsedMs: c.endMs,
          result: { ...done(plan, index, c.states[3], findings).result!, runDir: run.dir },
        });
      });
      return plan;
    }

    it('gives each policy its Kaplan–Meier curve, median, found/total, Â12 and p against random, and states with their quartiles', () => {
      const plan = survivalPlan();

      const report = fleetReport(plan);

      const group = report.groups[0];
      expect(group.group).toBe('bug=ack-before-commit');
      const t = group.timeToBug!;
      expect(t.bug).toBe('ack-before-commit');
      expect(t.baseline).toBe('random');
      const adaptive = t.arms['adaptive'];
      // Finds at 5 s and 20 s of 3: a third, then two thirds; the median is 20 s.
      expect(adaptive.steps.map((s) => [s.atMs, s.atRisk])).toEqual([
        [5_000, 3],
        [20_000, 2],
      ]);
      expect(adaptive.steps[0].found).toBeCloseTo(1 / 3, 12);
      expect(adaptive.steps[1].found).toBeCloseTo(2 / 3, 12);
      expect(adaptive).toMatchObject({ runs: 3, found: 2, medianMs: 20_000, censoredAtMs: [BUDGET_MS] });
      // Random: one find of 3, but the campaign that ended at 30 s without it is censored there:
      // at 40 s two are at risk, one finds it, so half are estimated to have found it by 40 s.
      const random = t.arms['random'];
      expect(random).toMatchObject({
        runs: 3,
        found: 1,
        medianMs: 40_000,
        censoredAtMs: [30_000, BUDGET_MS],
      });
      expect(random.steps).toEqual([{ atMs: 40_000, found: 0.5, atRisk: 2, finds: 1 }]);
      // Sooner, a miss as +∞: 5 s and 20 s beat all 3 of random's, the miss loses to 40 s and ties two: 7/9.
      // Exact p: ranks 1, 2, 5 of {1, 2, 3, 5, 5, 5}; 4 of the 20 arrangements sum to ≤ 8: p = 0.4.
      expect(adaptive.a12Sooner).toBeCloseTo(7 / 9, 12);
      expect(adaptive.p).toBeCloseTo(0.4, 12);
      expect(adaptive.pMethod).toBe('exact');
      // 2 / C(6, 3): the least any arrangement of 3 against 3 can give.
      expect(adaptive.leastP).toBeCloseTo(0.1, 12);

      // States at 60 s: adaptive 8, 12, 4 (median 8, quartiles 6 and 10); random 4, 2, 5 (4; 3 and 4.5).
      const s = group.states!;
      expect(s.metric).toBe('states_causal');
      expect(s.arms['adaptive'].runs).toBe(3);
      expect(s.arms['adaptive'].points.at(-1)).toEqual({ atMs: BUDGET_MS, median: 8, q1: 6, q3: 10 });
      expect(s.arms['random'].points.at(-1)).toEqual({ atMs: BUDGET_MS, median: 4, q1: 3, q3: 4.5 });
      // Before the first sample (15 s) every run is at 0.
      expect(s.arms['random'].points[1]).toEqual({ atMs: 3_000, median: 0, q1: 0, q3: 0 });

      const onDisk = JSON.parse(readFileSync(join(report.dir, 'results.json'), 'utf8')) as typeof report;
      expect(onDisk.groups[0].timeToBug).toEqual(JSON.parse(JSON.stringify(t)));
      expect(onDisk.groups[0].states).toEqual(s);

      const text = fleetReportText(report);
      expect(text).toContain('time to bug (ack-before-commit: the first finding of any kind; Kaplan–Meier');
      expect(text).toMatch(/\n {2}adaptive +2\/3 +20\.0 s +0\.78 +0\.400 \(exact; least possible 0\.10\)\n/);
      expect(text).toMatch(/\n {2}random +1\/3 +40\.0 s\n/);
      // Share found by 12, 24, 36, 48 and 60 s.
      expect(text).toContain('share of campaigns that found it by 12 s, 24 s, 36 s, 48 s, 1 min:');
      expect(text).toMatch(/\n {2}adaptive +0\.33 +0\.67 +0\.67 +0\.67 +0\.67\n/);
      expect(text).toMatch(/\n {2}random +0\.00 +0\.00 +0\.00 +0\.50 +0\.50\n/);
      // States at 24 s: adaptive 2, 3, 1 (2 [1.5–2.5]); at 60 s as above.
      expect(text).toMatch(/\n {2}adaptive +0 \[0–0\] +2 \[1\.5–2\.5\] .* 8 \[6–10\] {2}\(3 campaigns\)\n/);
      expect(text).toMatch(/\n {2}random .* 4 \[3–4\.5\] {2}\(3 campaigns\)/);
      // The few-runs warning comes once, in plan's terms; the comparison's own time to bug is not repeated.
      expect(text.match(/no difference can be significant/g)).toHaveLength(1);
      expect(text).toContain('the smallest p these sizes allow is 0.100');
      expect(text).toContain('--seeds 4 or more');
      expect(text).not.toContain('time to first detection');
    });

    it('draws the survival curves in a real browser, at the shares results.json holds', async () => {
      const report = fleetReport(survivalPlan());
      const t = report.groups[0].timeToBug!;

      const dom = await chromium(['--dump-dom', `file://${join(report.dir, 'report.html')}`]);

      const plot = /<div class="plot survival">([\s\S]*?)<\/svg>/.exec(dom)?.[1];
      expect(plot).toBeDefined();
      expect(plot).toContain('Share of campaigns that found ack-before-commit');
      // The y axis: where its ticks 0 and 1 are drawn (a tick's label sits 4 px below its line).
      const tickY = (label: string): number => {
        const m = new RegExp(`<text x="[\\d.]+" y="([\\d.]+)" text-anchor="end">${label}</text>`).exec(plot!);
        expect(m, `the y tick ${label}`).not.toBeNull();
        return Number(m![1]) - 4;
      };
      const y0 = tickY('0');
      const y1 = tickY('1');
      for (const [arm, a] of Object.entries(t.arms)) {
        const path = new RegExp(`<path class="series" d="([^"]+)"[^>]*><title>${arm}</title>`).exec(plot!);
        expect(path, `the line of ${arm}`).not.toBeNull();
        const ys = [...path![1].matchAll(/[ML][\d.]+,([\d.]+)/g)].map((m) => (y0 - Number(m[1])) / (y0 - y1));
        // A step per find: up from the share before to the share after, from 0 to the last share.
        expect(ys).toHaveLength(2 + 2 * a.steps.length);
        const levels = [0, ...a.steps.map((s) => s.found)];
        expect([...new Set(ys.map((y) => y.toFixed(2)))]).toEqual(levels.map((l) => l.toFixed(2)));
        // The legend names it.
        expect(plot).toMatch(new RegExp(`<text [^>]*>${arm}</text>`));
        // Its row in the table: found/total, median, Â12 and p as results.json has them.
        const row = new RegExp(`<tr data-policy="${arm}">(.*?)</tr>`).exec(dom)?.[1];
        expect(row).toContain(`<td>${a.found}/${a.runs}</td>`);
        expect(row).toContain(
          `<td>${a.medianMs === null ? 'not reached' : `${(a.medianMs / 1000).toFixed(1)} s`}</td>`,
        );
        if (a.p !== undefined)
          expect(row).toContain(
            `<td>${a.a12Sooner!.toFixed(2)}</td><td>${a.p.toFixed(3)} (exact)</td><td>${a.leastP!.toPrecision(2)}</td>`,
          );
      }
      expect(dom).toContain('<div class="plot states">');
      expect(dom).toMatch(/<td>adaptive<\/td><td>3<\/td>.*<td>8 \[6–10\]<\/td><\/tr>/);
      expect(dom).toContain('class="warning"');
      expect(dom).toContain('the smallest p these sizes allow is 0.100');
      expect(dom).toMatch(/<a href="[^"]+\/report\.html">random, seed 2<\/a>/);
    }, 120_000);
  });
});
