import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import type { TimedFault } from '../../src/report/fault-windows.js';
import type { OpBar } from '../../src/report/op-bars.js';
import { chartWidthPx, workbenchHtml, type WorkbenchInput } from '../../src/report/workbench.js';
import { writeRunReport } from '../../src/report/write-run-report.js';
import { CHROMIUM, CHROMIUM_TIMEOUT_MS, chromium } from '../_helpers/chromium.js';
import { fakeRun } from './_helpers/fake-run.js';

function fault(atMs: number, f: string, nodes: string[], grudge: string | null = null): TimedFault {
  return { schedule: 0, step: null, atMs, f, value: null, nodes, outcome: 'ok', error: null, grudge };
}

function input(bars: OpBar[], faults: TimedFault[] = []): WorkbenchInput {
  return {
    endMs: 10_000,
    nodes: ['n1', 'n2', 'n3'],
    bars,
    faults,
    windows: [],
    marks: [],
    roles: [],
    resetsMs: [5000],
    bugs: [{ id: 1, atMs: 9000, label: 'linearizability/register' }],
  };
}

function count(html: string, re: RegExp): number {
  return [...html.matchAll(re)].length;
}

describe('workbenchHtml', () => {
  const bars: OpBar[] = [
    { process: 0, f: 'read', outcome: 'ok', startMs: 100, endMs: 103, value: ['k', null], result: ['k', 1] },
    { process: 1, f: 'write', outcome: 'info', startMs: 200, endMs: 1200, value: ['k', 2] },
    { process: 0, f: 'write', outcome: 'fail', startMs: 300, endMs: 302, value: ['k', 3], error: 'refused' },
    {
      process: 6,
      f: 'read',
      outcome: 'ok',
      startMs: 1300,
      endMs: 1350,
      value: ['k', null],
      result: ['k', 1],
    },
    { process: 7, f: 'cas', outcome: 'open', startMs: 9000, endMs: 10_000, value: ['k', [1, 2]] },
  ];

  it('draws a bar per op in lanes, every completed op as a point on a log axis, quantiles and rates by f', () => {
    const html = workbenchHtml(input(bars));
    expect(count(html, /<rect class="bar /g)).toBe(5);
    expect(html).toContain('data-lanes="2"'); // 1 overlaps 0; 6 and 7 come after 0 in its lane
    const points = [...html.matchAll(/<path class="points (\w+)" data-f="(\w+)" data-n="(\d+)"/g)].map(
      (m) => [m[1], m[2], Number(m[3])],
    );
    expect(points).toEqual([
      ['ok', 'read', 2],
      ['info', 'write', 1],
      ['fail', 'write', 1],
    ]);
    expect(count(html, /<path class="quantile"/g)).toBe(3);
    expect(count(html, /<path class="rate"/g)).toBe(3); // read ok, write info, write fail
    // A log axis: decades from 1 ms to 1 s.
    for (const label of ['1 ms', '10 ms', '100 ms', '1 s']) expect(html).toContain(`>${label}</text>`);
    expect(html).toContain('process 1: write [&#34;k&#34; 2] → info');
    expect(html).toContain('class="reset"');
    expect(html).toContain('>bug 1</text>');
  });

  it('labels faults with their grudge, in rows that keep labels apart, closers left to their window', () => {
    const html = workbenchHtml(
      input(bars, [
        fault(1000, 'start-partition', ['n1', 'n2', 'n3'], 'n1,n3 | n2'),
        fault(1010, 'kill', ['n2']),
        fault(4000, 'stop-partition', ['n1', 'n2', 'n3']),
      ]),
    );
    const labels = [
      ...html.matchAll(
        /<text class="fault-label" data-ms="(\d+)" x="[^"]+" y="(\d+)"[^>]*><title>[^<]*<\/title>([^<]+)</g,
      ),
    ].map((m) => [Number(m[1]), Number(m[2]), m[3]]);
    expect(labels.map((l) => l[2])).toEqual(['start-partition n1,n3 | n2', 'kill n2']);
    expect(labels[0][1]).not.toBe(labels[1][1]);
  });

  it('makes the charts as wide as the run is long, within bounds', () => {
    expect(chartWidthPx(30_000)).toBe(900);
    expect(chartWidthPx(240_000)).toBe(2400);
    expect(chartWidthPx(600_000)).toBeGreaterThan(chartWidthPx(240_000));
    expect(chartWidthPx(100 * 3_600_000)).toBe(30_000);
    expect(workbenchHtml({ ...input(bars), endMs: 240_000 })).toContain(
      '<svg class="zoom lanes" data-lanes="2" data-processes="4" data-h="28" width="2400"',
    );
  });
});

describe('the run report page in Chromium', () => {
  const run = fakeRun();
  afterAll(() => {
    rmSync(join(run.store, '..'), { recursive: true, force: true });
  });

  it.skipIf(!existsSync(CHROMIUM))(
    'draws the lanes, the latency points, the rate lines and the grudge, and zooms to a range in the address',
    async () => {
      const { html } = await writeRunReport(run.dir);
      const ops = readFileSync(join(run.dir, 'history.jsonl'), 'utf8')
        .split('\n')
        .filter((l) => l.includes('"invoke"')).length;
      const dom = await chromium(['--dump-dom', `file://${html}`]);
      const body = /<body ([^>]*)>/.exec(dom)![1];
      const data = Object.fromEntries(
        [...body.matchAll(/data-([\w-]+)="([^"]*)"/g)].map((m) => [m[1], m[2]]),
      );
      expect(Number(data.bars)).toBe(ops);
      expect(Number(data.points)).toBe(ops);
      expect(Number(data.lanes)).toBeGreaterThan(0);
      expect(Number(data.quantiles)).toBe(3);
      expect(Number(data.rates)).toBeGreaterThanOrEqual(3); // write ok, fail, info
      expect(Number(data['fault-labels'])).toBe(2); // the kill and the partition; start and stop close windows
      expect(data.drawn).toBe(data.plots);
      expect(dom).toContain('start-partition n1 | n2,n3</text>');
      // At the whole run, ticks are durations from the start; zoomed to 1–2 s, every chart follows.
      expect(/data-ticks="([^"]*)"/.exec(dom)![1].split('|')[0]).toBe('0 s');
      const zoomed = await chromium(['--dump-dom', `file://${html}#zoom=1-2`]);
      expect(zoomed).toMatch(
        /<div id="wb"[^>]* data-from="1000" data-to="2000" data-ticks="1\.0 s\|[^"]*\|2\.0 s"/,
      );
      expect(zoomed).toMatch(/<svg class="zoom lanes"[^>]* viewBox="1000 0 1000 /);
      expect(zoomed).toMatch(/<svg class="zoom scatter"[^>]* viewBox="1000 0 1000 /);
    },
    CHROMIUM_TIMEOUT_MS * 2,
  );
});
