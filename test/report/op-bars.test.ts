import { describe, expect, it } from 'vitest';

import { NS_PER_MS } from '../../src/core/clock.js';
import type { Op } from '../../src/core/op.js';
import {
  opBars,
  processLanes,
  rateByF,
  thinBars,
  windowedQuantiles,
  type OpBar,
} from '../../src/report/op-bars.js';

function op(index: number, ms: number, type: Op['type'], process: Op['process'], f = 'read'): Op {
  return { index, time: ms * NS_PER_MS, type, process, f, value: ['k', index] };
}

function bar(
  process: number,
  startMs: number,
  endMs: number,
  outcome: OpBar['outcome'] = 'ok',
  f = 'read',
): OpBar {
  return { process, f, outcome, startMs, endMs, value: null };
}

describe('opBars', () => {
  it('pairs each invocation with its completion by process, leaves out the nemesis, and runs an unfinished op to the end', () => {
    const bars = opBars(
      [
        op(0, 10, 'invoke', 0, 'write'),
        op(1, 12, 'invoke', 1),
        op(2, 15, 'info', 'nemesis', 'kill'),
        op(3, 30, 'ok', 0, 'write'),
        op(4, 40, 'info', 1),
        op(5, 50, 'invoke', 6),
        op(6, 55, 'invoke', 0),
        op(7, 58, 'fail', 0),
      ],
      100,
    );
    expect(bars.map((b) => [b.process, b.f, b.outcome, b.startMs, b.endMs])).toEqual([
      [0, 'write', 'ok', 10, 30],
      [1, 'read', 'info', 12, 40],
      [6, 'read', 'open', 50, 100],
      [0, 'read', 'fail', 55, 58],
    ]);
  });
});

describe('processLanes', () => {
  it('gives a retired process lane to the next process, and overlapping processes lanes of their own', () => {
    // Workers 0 and 1 (concurrency 2): process 0 retires at 40 (info) and goes on as 2; 1 as 3.
    const lanes = processLanes([
      bar(0, 0, 40, 'info'),
      bar(1, 5, 20),
      bar(1, 25, 60, 'info'),
      bar(2, 40, 50),
      bar(3, 60, 90),
      bar(2, 55, 70),
    ]);
    expect(lanes.processes).toEqual([
      [0, 2],
      [1, 3],
    ]);
    expect([...lanes.laneOf]).toEqual([
      [0, 0],
      [1, 1],
      [2, 0],
      [3, 1],
    ]);
  });

  it('never puts two processes that overlap in time in one lane', () => {
    const bars = Array.from({ length: 60 }, (_, i) =>
      bar(i, (i * 37) % 500, ((i * 37) % 500) + 20 + (i % 13) * 7),
    );
    const { laneOf } = processLanes(bars);
    for (const a of bars) {
      for (const b of bars) {
        if (a.process < b.process && laneOf.get(a.process) === laneOf.get(b.process)) {
          expect(a.endMs <= b.startMs || b.endMs <= a.startMs).toBe(true);
        }
      }
    }
  });
});

describe('thinBars', () => {
  it('keeps every fail, info and open bar and takes ok ones evenly, to at most max', () => {
    const bars = [
      ...Array.from({ length: 100 }, (_, i) => bar(0, i * 10, i * 10 + 5)),
      bar(1, 3, 4, 'fail'),
      bar(2, 500, 900, 'info'),
    ];
    const { bars: kept, leftOut } = thinBars(bars, 22);
    expect(kept).toHaveLength(22);
    expect(leftOut).toBe(80);
    expect(kept.filter((b) => b.outcome !== 'ok')).toHaveLength(2);
    const okStarts = kept.filter((b) => b.outcome === 'ok').map((b) => b.startMs);
    expect(okStarts[0]).toBe(0);
    expect(Math.max(...okStarts)).toBeGreaterThanOrEqual(900);
    expect(thinBars(bars, 1000).leftOut).toBe(0);
  });
});

describe('windowedQuantiles and rateByF', () => {
  it('gives the quantiles of each window, a gap where a window has none', () => {
    const points = [1, 2, 3, 4, 100].map((latencyMs, i) => ({ atMs: 100 + i, latencyMs }));
    const [p50, p99] = windowedQuantiles(points, 3000, 1000, [0.5, 0.99]);
    expect(p50.points[0]).toEqual([500, 3]);
    expect(p99.points[0]).toEqual([500, 100]);
    expect(Number.isNaN(p50.points[1][1])).toBe(true);
    expect(p50.points).toHaveLength(3);
  });

  it('counts completions per second per f and outcome, leaving out ops never completed', () => {
    const series = rateByF(
      [bar(0, 0, 100), bar(0, 0, 200), bar(1, 0, 1500, 'fail', 'write'), bar(2, 0, 3000, 'open')],
      2000,
      1000,
    );
    expect(series).toEqual([
      {
        f: 'read',
        outcome: 'ok',
        points: [
          [500, 2],
          [1500, 0],
        ],
      },
      {
        f: 'write',
        outcome: 'fail',
        points: [
          [500, 0],
          [1500, 1],
        ],
      },
    ]);
  });
});
