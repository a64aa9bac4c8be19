import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import type { Op } from '../../src/core/op.js';
import { bucketMsFor, completions, opSeries, quantile } from '../../src/report/op-series.js';

const MS = 1_000_000;

function op(time: number, type: Op['type'], process: Op['process'], f = 'read'): Op {
  return { index: 0, time: time * MS, type, process, f, value: null };
}

describe('completions', () => {
  it('pairs each completion with its invocation by the same process and leaves out the nemesis', () => {
    const done = completions([
      op(0, 'invoke', 0),
      op(5, 'invoke', 1),
      op(7, 'info', 'nemesis', 'kill'),
      op(30, 'ok', 1),
      op(40, 'fail', 0),
      op(50, 'info', 2), // no invocation
    ]);
    expect(done).toEqual([
      { endMs: 30, outcome: 'ok', latencyMs: 25 },
      { endMs: 40, outcome: 'fail', latencyMs: 40 },
    ]);
  });
});

describe('opSeries', () => {
  it('counts completions per second in each bucket, by outcome, at the bucket midpoints', () => {
    const done = [
      { endMs: 100, outcome: 'ok' as const, latencyMs: 10 },
      { endMs: 900, outcome: 'ok' as const, latencyMs: 30 },
      { endMs: 2500, outcome: 'info' as const, latencyMs: 1000 },
    ];
    const s = opSeries(done, { endMs: 3000, bucketMs: 1000 });
    expect(s.rate.ok).toEqual([
      [0.5, 2],
      [1.5, 0],
      [2.5, 0],
    ]);
    expect(s.rate.info.map(([, y]) => y)).toEqual([0, 0, 1]);
    expect(s.counts).toEqual({ ok: 2, fail: 0, info: 1 });
    const p50 = s.latency.find((l) => l.quantile === 0.5)!.series;
    expect(p50.ok[0][1]).toBe(10);
    expect(p50.ok[1][1]).toBeNaN(); // no op: a gap, not a zero
    expect(p50.info[2][1]).toBe(1000);
  });

  it('scales rates to ops per second for buckets longer than a second', () => {
    const done = Array.from({ length: 10 }, (_, i) => ({
      endMs: i * 100,
      outcome: 'ok' as const,
      latencyMs: 1,
    }));
    expect(opSeries(done, { endMs: 2000, bucketMs: 2000 }).rate.ok).toEqual([[1, 5]]);
  });

  it('puts every completion in exactly one bucket (property)', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            endMs: fc.integer({ min: 0, max: 100_000 }),
            outcome: fc.constantFrom('ok', 'fail', 'info' as const),
          }),
        ),
        fc.integer({ min: 1, max: 200_000 }),
        (raw, endMs) => {
          const done = raw.map((r) => ({ ...r, latencyMs: 1 }));
          const s = opSeries(done, { endMs });
          const perSecond = 1000 / s.bucketMs;
          const total = (['ok', 'fail', 'info'] as const).reduce(
            (sum, o) => sum + s.rate[o].reduce((a, [, y]) => a + y / perSecond, 0),
            0,
          );
          expect(Math.round(total)).toBe(done.length);
        },
      ),
    );
  });
});

describe('bucketMsFor and quantile', () => {
  it('picks a round bucket giving at most 240 buckets, never under 1 s', () => {
    expect(bucketMsFor(20_000)).toBe(1000);
    expect(bucketMsFor(600_000)).toBe(5000);
    expect(bucketMsFor(3_600_000)).toBe(15_000);
  });

  it('takes nearest-rank quantiles', () => {
    expect(quantile([1, 2, 3, 4], 0.5)).toBe(2);
    expect(quantile([1, 2, 3, 4], 0.95)).toBe(4);
    expect(quantile([], 0.5)).toBeNaN();
  });
});
