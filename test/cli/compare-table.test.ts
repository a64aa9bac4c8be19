import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { mergeComparisons } from '../../src/campaign/compare.js';
import { compareTable } from '../../src/cli/_internals/compare-table.js';

describe("mallory compare's table", () => {
  const dir = mkdtempSync(join(tmpdir(), 'mallory-compare-table-'));
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });
  const run = (seed: number, states: number, rss: number, bugAt: number | null) => ({
    seed,
    runDir: join(dir, 'gone', String(seed)),
    metrics: { states_causal: states, fuzzer_peak_rss_mb: rss },
    bugs: bugAt === null ? [] : [{ name: 'linearizability/lost-write', atMs: bugAt }],
  });
  const compare = (name: string, runs: number, bugs: boolean): string => {
    const file = join(dir, `${name}.json`);
    const seeds = Array.from({ length: runs }, (_, i) => i + 1);
    writeFileSync(
      file,
      JSON.stringify({
        system: 'kvraft',
        workload: 'register',
        timeMs: 60_000,
        policies: {
          adaptive: { runs: seeds.map((s) => run(s, 30 + s, 120, bugs ? 10_000 * s : null)) },
          random: { runs: seeds.map((s) => run(s, 20 + s, 100, null)) },
        },
      }),
    );
    return compareTable(mergeComparisons([file], join(dir, 'store')));
  };

  it('names the baseline column, keeps costs apart from coverage, and warns when the runs are too few', () => {
    const table = compare('one', 1, false);
    const lines = table.split('\n');
    expect(table).toContain('runs: adaptive 1, random 1; baseline random');
    // The baseline's mean is under its name, not an unnamed "base".
    const header = lines.find((l) => l.startsWith('metric'))!;
    expect(header).toContain('random mean');
    expect(header).not.toMatch(/\bbase\b/);
    // Memory is a cost: in its own block, after coverage, not ranked with it.
    const coverage = lines.findIndex((l) => l.startsWith('coverage and bugs (more is better'));
    const costs = lines.findIndex((l) => l.startsWith('costs (less is better'));
    expect(coverage).toBeGreaterThanOrEqual(0);
    expect(costs).toBeGreaterThan(coverage);
    const rssRow = lines.findIndex((l) => l.startsWith('fuzzer_peak_rss_mb'));
    const statesRow = lines.findIndex((l) => l.startsWith('states_causal '));
    expect(statesRow).toBeGreaterThan(coverage);
    expect(statesRow).toBeLessThan(costs);
    expect(rssRow).toBeGreaterThan(costs);
    expect(lines[rssRow]).toMatch(/fuzzer_peak_rss_mb\s+adaptive\s+120\s+100\s+1\.20/);
    expect(table).toContain(
      'warning: with 1 run of adaptive and 1 of random, no difference can be significant (the smallest p these sizes allow is 1.000)',
    );
    // No heading with nothing under it.
    expect(table).toContain('time to first detection: no run of any policy found a bug');
    expect(table).not.toContain('time to first detection (median');
  });

  it('with enough runs it gives no warning, and lists each policy’s time to the bug', () => {
    const table = compare('five', 5, true);
    expect(table).not.toContain('warning:');
    expect(table).toContain('time to first detection (median over all runs');
    expect(table).toMatch(/adaptive\s+linearizability\/lost-write\s+found 5\/5\s+median 30\.0 s/);
    expect(table).toMatch(/random\s+linearizability\/lost-write\s+found 0\/5\s+median > 60\.0 s/);
    expect(table).toMatch(/adaptive\s+\(any\) \(the first finding of any kind\)/);
  });
});
