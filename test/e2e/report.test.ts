import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { ResultsSchema, type Results } from '../../src/report/results.js';
import { CHROMIUM, chromium } from '../_helpers/chromium.js';
import { readStoredRun } from '../../src/store/run-reader.js';
import { validateJsonSchema } from '../report/_helpers/validate-json-schema.js';
import { explainExit, disposeSandbox, mallory, REPO, sandbox, jsonOf } from './helpers.js';

/** A screenshot of a page with charts: a blank page of that size is a few kB. */
const MIN_SCREENSHOT_BYTES = 50_000;
const SCHEMA_FILE = join(REPO, 'src', 'report', 'results.schema.json');

describe('mallory report', () => {
  const box = sandbox();
  afterAll(() => {
    disposeSandbox(box);
  });

  it('says what to give when the directory is not a run (exit 2, one line)', async () => {
    const r = await mallory(['report', '/nonexistent'], box);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      'mallory: report: /nonexistent does not exist: give a run directory, store/<system>/<run> (e.g. store/latest), or --index\n',
    );
  });

  it("keeps a real partition's links and shows its sides in the fault table, the workbench and results.json", async () => {
    const schedule = join(box.state, '..', 'grudge.jsonl');
    const lines = [
      { atMs: 1000, f: 'start-partition', value: 'isolate' },
      { atMs: 3000, f: 'stop-partition', value: null },
      { atMs: 3500, f: 'start-packet', value: { target: 'one', lossPct: 20 } },
      { atMs: 5500, f: 'stop-packet', value: null },
    ];
    writeFileSync(schedule, lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
    const run = await mallory(
      ['run', '--schedule', schedule, '--steps', '3', '--seed', '4', '--store', box.store, '--json'],
      box,
    );
    expect([0, 1], run.stderr).toContain(run.code);
    const runDir = (jsonOf(run) as { runDir: string }).runDir;
    const stored = readStoredRun(runDir).faults.filter((f) => f.outcome === 'ok');
    const partition = stored.find((f) => f.f === 'start-partition');
    expect(partition?.links?.length).toBeGreaterThan(0);
    const results = JSON.parse(readFileSync(join(runDir, 'results.json'), 'utf8')) as Results;
    // isolate: one node against the rest, e.g. `n2 | n1,n3`.
    const sides = results.faults.find((f) => f.f === 'start-partition')?.grudge;
    expect(sides).toMatch(/^n\d(,n\d)* \| n\d(,n\d)*$/);
    const packet = results.faults.find((f) => f.f === 'start-packet');
    expect(packet?.grudge).toBeDefined();
    expect(results.faults.find((f) => f.f === 'stop-partition')?.grudge).toBeUndefined();
    const page = readFileSync(join(runDir, 'report.html'), 'utf8');
    expect(page).toContain(`<td>start-partition</td><td>&#34;isolate&#34;</td><td>${sides!}</td>`);
    expect(page).toMatch(
      new RegExp(
        `<text class="fault-label"[^>]*><title>[^<]*</title>start-partition ${sides!.replace('|', '\\|')}</text>`,
      ),
    );
    if (!existsSync(CHROMIUM)) return;
    const dom = await chromium(['--dump-dom', `file://${join(runDir, 'report.html')}`]);
    expect(dom).toMatch(/<body [^>]*data-fault-labels="2"/);
  });

  it('reports a real kvraft campaign: results.json valid against its schema, every plot drawn in Chromium', async () => {
    const run = await mallory(['run', '--time', '20s', '--seed', '3', '--store', box.store, '--json'], box);
    expect([0, 1]).toContain(run.code);
    const summary = jsonOf(run) as { runDir: string; report?: string };
    const runDir = summary.runDir;
    // The campaign wrote its report and refreshed the store's index itself.
    expect(summary.report).toBe(join(runDir, 'report.html'));
    expect(readFileSync(join(runDir, 'report.html'), 'utf8')).toContain('<svg');
    expect(existsSync(join(runDir, 'results.json'))).toBe(true);
    expect(readFileSync(join(box.store, 'index.html'), 'utf8')).toContain(runDir.split('/').at(-1));

    const r = await mallory(['report', runDir], box);
    expect(r.code, explainExit(r)).toBe(0);
    expect(r.stdout).toBe(
      `${join(runDir, 'report.html')}\n${join(runDir, 'results.json')}\n${join(runDir, 'mallory.log')}\n`,
    );
    // The console log holds what the terminal showed, its first and last lines included.
    const consoleLog = readFileSync(join(runDir, 'mallory.log'), 'utf8');
    expect(consoleLog).toContain(`  run dir ${runDir}\n`);
    expect(consoleLog).toMatch(/\[\d\d:\d\d\/00:20\] schedule 1 step/);
    expect(consoleLog).toContain(`  report:  ${join(runDir, 'report.html')}\n`);
    for (const printed of run.stderr
      .split('\n')
      .filter((l) => l.startsWith('mallory: ') || l.startsWith('  ')))
      expect(consoleLog).toContain(printed);

    const results = JSON.parse(readFileSync(join(runDir, 'results.json'), 'utf8')) as Results;
    expect(ResultsSchema.safeParse(results).success).toBe(true);
    const schema = JSON.parse(readFileSync(SCHEMA_FILE, 'utf8')) as Record<string, unknown>;
    expect(validateJsonSchema(schema, results)).toEqual([]);
    expect(results.status).toBe('complete');
    expect(results.counts.ops.ok).toBeGreaterThan(100);
    const hadFaults = results.counts.faults.ok > 0;
    // Every checked schedule has a verdict from each check; the run is invalid exactly when it found a bug.
    expect(results.schedules.length).toBeGreaterThan(0);
    for (const sv of results.schedules) {
      expect(sv.checkers.map((c) => c.checker)).toEqual(['crash', 'recovery', 'linearizable', 'invariants']);
      expect(sv.checkers.find((c) => c.checker === 'linearizable')?.ops).toBeGreaterThan(0);
    }
    expect(results.verdict.valid === false).toBe(results.counts.bugs > 0);

    const index = await mallory(['report', '--index', '--store', box.store], box);
    expect(index.code).toBe(0);
    expect(readFileSync(join(box.store, 'index.html'), 'utf8')).toContain('/report.html">report</a>');

    if (!existsSync(CHROMIUM)) return; // the rest needs Debian's chromium
    const url = `file://${join(runDir, 'report.html')}`;
    const dom = await chromium(['--dump-dom', url]);
    const body = /<body data-plots="(\d+)" data-drawn="(\d+)" data-bands="(\d+)" ([^>]*)>/.exec(dom);
    expect(body, 'the page self-check ran').not.toBeNull();
    const [plots, drawn, bands] = body!.slice(1, 4).map(Number);
    const seen = Object.fromEntries(
      [...body![4].matchAll(/data-([\w-]+)="(\d+)"/g)].map((m) => [m[1], Number(m[2])]),
    );
    // The workbench: a lane per process (packed), a bar and a latency point per client op.
    // Fails from refused connections are counted apart from other fails (results.json version 3).
    const { ok, fail, info, refused } = results.counts.ops;
    const clientOps = ok + fail + (refused ?? 0) + info;
    expect(seen.lanes).toBeGreaterThan(0);
    expect(seen.bars).toBeGreaterThanOrEqual(clientOps);
    expect(seen.points).toBe(clientOps);
    expect(seen.quantiles).toBe(3);
    expect(seen.rates).toBeGreaterThan(0);
    if (hadFaults) expect(seen['fault-labels']).toBeGreaterThan(0);
    const verdictRows = /<table class="verdict-schedules">([\s\S]*?)<\/table>/.exec(dom)?.[1] ?? '';
    expect(verdictRows.match(/<tr>/g)).toHaveLength(results.schedules.length + 1);
    expect(plots).toBe(6); // node rows, lanes, latency, rate, states, event types
    expect(drawn).toBe(hadFaults ? plots : plots - 1); // the timeline has windows only with faults
    if (hadFaults) expect(bands).toBeGreaterThan(0);
    for (const svg of dom.match(/<svg[^>]*class="plot"[\s\S]*?<\/svg>/g) ?? []) {
      expect(svg).toMatch(/<path class="series" d="M[\d.]+,[\d.]+ L[\d.]+,[\d.]+/);
    }
    const png = join(runDir, 'report.png');
    await chromium(['--window-size=1100,3000', `--screenshot=${png}`, url]);
    expect((await readFile(png)).subarray(1, 4).toString('latin1')).toBe('PNG');
    expect((await stat(png)).size).toBeGreaterThan(MIN_SCREENSHOT_BYTES);
  });
});
