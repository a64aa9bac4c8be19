import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

import { describe, expect, it } from 'vitest';

import type { Op } from '../../src/core/op.js';
import { checkOps } from '../../src/check/linearizable.js';
import { renderLinearizabilityHtml } from '../../src/check/linearizable-html.js';
import { CHROMIUM, CHROMIUM_TIMEOUT_MS, chromium } from '../_helpers/chromium.js';

function history(...rows: readonly (readonly [number | 'nemesis', Op['type'], string, unknown])[]): Op[] {
  return rows.map(([process, type, f, value], index) => ({
    index,
    time: index * 1_000_000,
    type,
    process,
    f,
    value,
  }));
}

/** Key "a" is fine; key "b" has a stale read while a partition is in force. */
const OPS = history(
  [0, 'invoke', 'write', ['b', 1]],
  [0, 'ok', 'write', ['b', 1]],
  ['nemesis', 'invoke', 'start-partition', 'majority'],
  ['nemesis', 'info', 'start-partition', 'majority'],
  [1, 'invoke', 'write', ['a', '<script>alert(1)</script>']],
  [0, 'invoke', 'write', ['b', 2]],
  [0, 'ok', 'write', ['b', 2]],
  [1, 'ok', 'write', ['a', '<script>alert(1)</script>']],
  [2, 'invoke', 'read', ['b', null]],
  [3, 'invoke', 'write', ['b', 3]],
  [2, 'ok', 'read', ['b', 1]],
  [3, 'info', 'write', ['b', 3]],
  ['nemesis', 'invoke', 'stop-partition', null],
  ['nemesis', 'info', 'stop-partition', null],
  ['nemesis', 'info', 'kill', 'n1'],
);

function count(html: string, pattern: RegExp): number {
  return [...html.matchAll(pattern)].length;
}

describe('renderLinearizabilityHtml', () => {
  it('shows the failing key, its op intervals, the linearization order, the failing op and the faults', async () => {
    const result = await checkOps(OPS, { model: 'kv' });
    expect(result.valid).toBe(false);
    const html = renderLinearizabilityHtml(result, OPS);
    expect(html).toMatch(/^<!doctype html>/);
    expect(html).toContain('not linearizable');
    expect(html).toContain('Showing key &#34;b&#34; only (1 ops on other keys hidden)');
    expect(count(html, /<g class="op /g)).toBe(4);
    expect(count(html, /<g class="op failing/g)).toBe(1);
    expect(html).toMatch(/<g class="op failing" data-index="8"/);
    expect(count(html, /<g class="op linearized/g)).toBe(result.counterexample!.longestPrefix.length);
    expect(html).toContain('data-order="1"');
    expect(html).toMatch(/<g class="op other open" data-index="9"/);
    expect(count(html, /<rect class="fault"/g)).toBe(2);
    expect(html).toContain('>start-partition majority</text>');
    expect(html).toContain('>kill n1</text>');
    expect(html).not.toContain('<script>alert');
  });

  it("labels each fault with its grudge, in its family's colour, in rows that keep labels apart", async () => {
    const early = history(
      [0, 'invoke', 'write', ['b', 1]],
      ['nemesis', 'info', 'start-partition', 'halves'],
      ['nemesis', 'info', 'start-partition', ['n1', 'n2', 'n3']],
      ['nemesis', 'info', 'kill', 'one'],
      ['nemesis', 'info', 'kill', ['n2']],
      [0, 'ok', 'write', ['b', 1]],
      ['nemesis', 'info', 'stop-partition', null],
      ['nemesis', 'info', 'stop-partition', ['n1', 'n2', 'n3']],
    );
    // A read a second later: the faults' labels, 2 ms apart, would overlap on one row.
    const ops: Op[] = [
      ...early,
      { index: 8, time: 1_000_000_000, type: 'invoke', process: 1, f: 'read', value: ['b', null] },
      { index: 9, time: 1_001_000_000, type: 'ok', process: 1, f: 'read', value: ['b', 1] },
    ];
    const result = await checkOps(ops, { model: 'kv' });
    const html = renderLinearizabilityHtml(result, ops, undefined, { grudges: new Map([[2, 'n1,n3 | n2']]) });
    // One window per fault (its announcement and completion are one), each kind its own colour.
    expect(count(html, /<rect class="fault"/g)).toBe(2);
    expect(html).toContain('>start-partition n1,n3 | n2</text>');
    expect(html).toContain('>kill n2</text>');
    const fills = [...html.matchAll(/<rect class="fault" data-f="([^"]+)"[^>]* fill="([^"]+)"/g)].map((m) => [
      m[1],
      m[2],
    ]);
    expect(fills).toEqual([
      ['start-partition', '#e377c2'],
      ['kill', '#7f7f7f'],
    ]);
    // The two labels start 1 ms apart: the second goes to a row of its own.
    const ys = [...html.matchAll(/<text class="fault-label" x="[^"]+" y="([^"]+)"/g)].map((m) =>
      Number(m[1]),
    );
    expect(new Set(ys).size).toBe(2);
    // Ticks read as durations from the run's start.
    expect(html).toMatch(/class="tick-label"[^>]*>0\.2 s</);
    expect(html).not.toMatch(/\d\.\d ms</);
  });

  it('ends a partition where the next one begins, so that windows of one kind never overlap', async () => {
    const ops = history(
      [0, 'invoke', 'write', ['b', 1]],
      ['nemesis', 'info', 'start-partition', 'halves'],
      ['nemesis', 'info', 'start-partition', ['n1', 'n2', 'n3']],
      ['nemesis', 'info', 'start-partition', 'isolate'],
      ['nemesis', 'info', 'start-partition', ['n1', 'n2', 'n3']],
      ['nemesis', 'info', 'stop-partition', null],
      ['nemesis', 'info', 'stop-partition', ['n1', 'n2', 'n3']],
      [0, 'ok', 'write', ['b', 1]],
    );
    const result = await checkOps(ops, { model: 'kv' });
    const html = renderLinearizabilityHtml(result, ops);
    const windows = [
      ...html.matchAll(/<rect class="fault" data-f="start-partition" x="([\d.]+)" y="\d+" width="([\d.]+)"/g),
    ].map((m) => [Number(m[1]), Number(m[1]) + Number(m[2])]);
    expect(windows).toHaveLength(2);
    expect(windows[0][1]).toBeCloseTo(windows[1][0], 0);
  });

  it('shows integers beyond 2^53 and keys that differ beyond it exactly', async () => {
    const big = 2n ** 53n;
    const ops = history(
      [0, 'invoke', 'write', [big + 1n, big + 1n]],
      [0, 'ok', 'write', [big + 1n, big + 1n]],
      [1, 'invoke', 'read', [big, null]],
      [1, 'ok', 'read', [big, big + 1n]],
    );
    const result = await checkOps(ops, { model: 'kv' });
    const html = renderLinearizabilityHtml(result, ops);
    expect(html).toContain('Key 9007199254740992: after the 0 ops');
    expect(html).toContain('read [9007199254740992 9007199254740993]</span>');
    expect(html).toContain('1 ops on other keys hidden');
  });

  it('draws every client op of a valid history, with no failing op', async () => {
    const ops = history(
      [0, 'invoke', 'write', 1],
      [1, 'invoke', 'read', null],
      [1, 'ok', 'read', 1],
      [0, 'ok', 'write', 1],
    );
    const result = await checkOps(ops, { model: 'register' });
    const html = renderLinearizabilityHtml(result, ops, [], { title: 'two ops' });
    expect(html).toContain('<title>two ops: linearizable</title>');
    expect(count(html, /<g class="op other/g)).toBe(2);
    expect(html).not.toContain('class="op failing');
    expect(html).not.toContain('class="fault"');
  });

  it.skipIf(!existsSync(CHROMIUM))(
    'renders in headless Chromium, script included (skipped when /usr/bin/chromium is not installed)',
    async () => {
      const result = await checkOps(OPS, { model: 'kv' });
      const dir = await mkdtemp(path.join(tmpdir(), 'mallory-html-'));
      try {
        const file = path.join(dir, 'check.html');
        await writeFile(file, renderLinearizabilityHtml(result, OPS));
        const dom = await chromium(['--dump-dom', `file://${file}`]);
        expect(dom).toContain('<body data-ops="4" data-faults="2">');
        expect(dom).toMatch(/<g class="op failing" data-index="8"/);
        const png = path.join(dir, 'check.png');
        await chromium(['--window-size=1300,700', `--screenshot=${png}`, `file://${file}`]);
        const header = (await readFile(png)).subarray(1, 4).toString('latin1');
        expect(header).toBe('PNG');
        expect((await stat(png)).size).toBeGreaterThan(10_000);
      } finally {
        // A failing assertion must not leave the page behind.
        await rm(dir, { recursive: true, force: true });
      }
    },
    CHROMIUM_TIMEOUT_MS * 2,
  );
  it("gives times from the run's start, not from the checked schedule's first op", async () => {
    // A schedule 42 s into the run: its ops are 1 ms apart from 42.000 s on.
    const RUN_OFFSET_NS = 42_000_000_000;
    const ops = OPS.map((op) => ({ ...op, time: op.time + RUN_OFFSET_NS }));
    const result = await checkOps(ops, { model: 'kv' });
    const html = renderLinearizabilityHtml(result, ops);
    const ticks = [...html.matchAll(/<text class="tick-label"[^>]*>([^<]*)<\/text>/g)].map((m) => m[1]);
    expect(ticks.length).toBeGreaterThan(2);
    for (const tick of ticks) expect(tick).toMatch(/^42\.0\d* s$/);
    expect(ticks[0]).not.toBe(ticks[1]);
    // An op's own times, in seconds since the run started: the stale read is invoked at op 8, 42.008 s.
    expect(html).toContain('invoke index 8 at 42.008 s, completion index 10 at 42.010 s');
    expect(html).toContain('Times are seconds since the run started');
    expect(html).not.toMatch(/\d ms<\/text>/);
  });
});
