import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import type { Results } from '../../src/report/results.js';
import { writeRunReport } from '../../src/report/write-run-report.js';
import { fakeRun } from './_helpers/fake-run.js';

describe('writeRunReport', () => {
  const run = fakeRun();
  afterAll(() => {
    rmSync(join(run.store, '..'), { recursive: true, force: true });
  });

  it('writes results.json with the counts, the faults on the run axis with their reasons, and the bugs with commands', async () => {
    const { json, html } = await writeRunReport(run.dir);
    expect(json).toBe(join(run.dir, 'results.json'));
    expect(existsSync(html)).toBe(true);
    const r = JSON.parse(readFileSync(json, 'utf8')) as Results;
    expect(r.schema).toBe('mallory/results');
    expect(r.version).toBe(3);
    // Refused connections are counted apart from the fails that matter, in the page as in the JSON.
    expect(readFileSync(html, 'utf8')).toContain(
      '24 ok, 3 fail + 4 refused (connection refused: a node down), 8 info',
    );
    expect(r.verdict).toEqual({
      valid: false,
      checkers: [
        { checker: 'crash', schedules: 1, valid: 1, invalid: 0, unknown: 0 },
        { checker: 'recovery', schedules: 1, valid: 1, invalid: 0, unknown: 0 },
        { checker: 'linearizable', schedules: 1, valid: 0, invalid: 1, unknown: 0 },
      ],
    });
    expect(r.schedules).toHaveLength(1);
    expect(r.schedules[0]).toMatchObject({ schedule: 0, valid: false });
    expect(r.schedules[0].checkers[2]).toEqual({
      checker: 'linearizable',
      valid: false,
      findings: ['linearizability/register'],
      ops: 32,
      ms: 3,
    });
    expect(r.run).toMatchObject({ system: 'kvraft', seed: 5, policy: 'random', nodes: ['n1', 'n2', 'n3'] });
    expect(r.status).toBe('complete');
    expect(r.counts).toEqual({
      schedules: 1,
      ops: { ok: 24, fail: 3, info: 8, refused: 4 },
      faults: { ok: 4, skipped: 1, error: 1 },
      bugs: 1,
      bugHits: 1,
    });
    expect(r.faults.find((f) => f.outcome === 'skipped')?.error).toBe('no node it could act on');
    expect(r.faults.find((f) => f.outcome === 'error')?.error).toBe('not yet committed');
    const bugDir = join(run.dir, 'bugs', '1');
    expect(r.bugs).toEqual([
      {
        id: 1,
        schedule: 0,
        kind: 'linearizability',
        name: 'register',
        message: 'read 3 cannot be placed after state 2',
        foundAtMs: 4100,
        // Stored before bugs had hits: its own schedule is its one hit.
        hits: [{ schedule: 0, foundAtMs: 4100, message: 'read 3 cannot be placed after state 2' }],
        dir: bugDir,
        checkHtml: join(bugDir, 'check.html'),
        replay: `mallory replay ${bugDir} --repeat 10`,
        shrink: `mallory shrink ${bugDir}`,
        // The fake run took no checkpoints: a replay starts fresh.
        checkpoint: null,
      },
    ]);
    expect(r.checkpoints).toBeUndefined();
    expect(r.coverage).toEqual({ states_causal: 4, states_artifact: 1, event_types: 6 });
  });

  it('draws every plot, the fault bands, the per-node windows and roles, and links the bug page', async () => {
    const { html } = await writeRunReport(run.dir);
    const page = readFileSync(html, 'utf8');
    const plots = page.match(/<svg[^>]*class="plot"[\s\S]*?<\/svg>/g) ?? [];
    expect(plots).toHaveLength(2); // states, event types
    for (const plot of plots) {
      expect(plot).toMatch(/<path class="series" d="M[\d.]+,[\d.]+ L/);
      expect(plot).toContain('class="band"');
    }
    expect(page).toMatch(/<rect class="window"[^>]*fill="#7f7f7f"[^>]*><title>kill n2 1\.0 s–2\.5 s/);
    // The partition's sides, from its stored links: in the fault table, its label and its windows.
    expect(page).toContain('<td>start-partition</td><td>&#34;halves&#34;</td><td>n1 | n2,n3</td>');
    expect(page).toMatch(
      /<text class="fault-label" data-ms="1500"[^>]*><title>[^<]*<\/title>start-partition n1 \| n2,n3<\/text>/,
    );
    expect(page).toContain('(ended by stop): n1 | n2,n3</title>');
    expect(page).toContain('<title>n1 leader 0.2 s–');
    expect(page).toContain('href="bugs/1/check.html"');
    expect(page).toContain(`mallory replay ${join(run.dir, 'bugs', '1')} --repeat 10`);
    // Schedule 0 of results.json is schedule 1 here, as on the terminal and in check.html.
    expect(page).toContain('(schedule 1, at 4.1 s)');
    expect(page).toMatch(/<table class="verdict-schedules">.*\n<tr><td>1<\/td>/);
    // The kill of step index 1 is step 2.
    expect(page).toContain('<tr class="outcome-ok"><td>1</td><td>2</td><td>1.0 s</td><td>kill</td>');
    expect(page).not.toMatch(/<tr class="outcome-\w+"><td>0<\/td>/);
    expect(page).toContain('Schedules and steps are numbered from 1');
    expect(page.match(/<script/g)).toHaveLength(1);
    expect(page).not.toMatch(/src=|href="http|@import|url\(/);
  });

  it('writes into --out with links back to the run', async () => {
    const out = mkdtempSync(join(tmpdir(), 'mallory-report-out-'));
    try {
      const { html } = await writeRunReport(run.dir, { outDir: out });
      expect(html).toBe(join(out, 'report.html'));
      expect(readFileSync(html, 'utf8')).toMatch(/href="[./]*[^"]*\/bugs\/1\/check\.html"/);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });

  it('refuses a directory that is not a run', async () => {
    await expect(writeRunReport('/nonexistent')).rejects.toThrow('/nonexistent does not exist');
  });
});
