import { describe, expect, it } from 'vitest';

import type { Op } from '../../src/core/op.js';
import {
  faultWindows,
  familyIntervals,
  resetTimes,
  timedFaults,
  type TimedFault,
} from '../../src/report/fault-windows.js';
import type { StoredFault } from '../../src/store/run-reader.js';

function fault(atMs: number, f: string, nodes: string[], outcome: TimedFault['outcome'] = 'ok'): TimedFault {
  return { schedule: 0, step: null, atMs, f, value: null, nodes, outcome, error: null, grudge: null };
}

describe('faultWindows', () => {
  it('opens a window per node at the fault and closes it at its stop', () => {
    const { windows } = faultWindows(
      [fault(1000, 'kill', ['n2', 'n3']), fault(3000, 'start', ['n3']), fault(4000, 'start', ['n2'])],
      [],
      10_000,
    );
    expect(windows).toEqual([
      { node: 'n2', family: 'kill', f: 'kill', fromMs: 1000, toMs: 4000, endedBy: 'stop' },
      { node: 'n3', family: 'kill', f: 'kill', fromMs: 1000, toMs: 3000, endedBy: 'stop' },
    ]);
  });

  it('a kill ends the pause of the node it kills: restarted, it runs', () => {
    const { windows } = faultWindows(
      [fault(1000, 'pause', ['n1', 'n2']), fault(2000, 'kill', ['n1']), fault(3000, 'start', ['n1'])],
      [],
      10_000,
    );
    expect(windows).toEqual([
      { node: 'n1', family: 'pause', f: 'pause', fromMs: 1000, toMs: 2000, endedBy: 'stop' },
      { node: 'n2', family: 'pause', f: 'pause', fromMs: 1000, toMs: 10_000, endedBy: 'end' },
      { node: 'n1', family: 'kill', f: 'kill', fromMs: 2000, toMs: 3000, endedBy: 'stop' },
    ]);
  });

  it('a clock window runs from any clock fault to reset-clock', () => {
    const { windows } = faultWindows(
      [
        fault(1000, 'bump-clock', ['n1']),
        fault(2000, 'drift-clock', ['n2']),
        fault(3000, 'reset-clock', ['n1', 'n2']),
      ],
      [],
      10_000,
    );
    expect(windows.map((w) => [w.node, w.family, w.f, w.fromMs, w.toMs, w.endedBy])).toEqual([
      ['n1', 'clock', 'bump-clock', 1000, 3000, 'stop'],
      ['n2', 'clock', 'drift-clock', 2000, 3000, 'stop'],
    ]);
  });

  it('closes what is still open at the reset, and at the end of the run', () => {
    const { windows } = faultWindows(
      [fault(1000, 'pause', ['n1']), fault(6000, 'start-partition', ['n1', 'n2'])],
      [5000],
      8000,
    );
    expect(windows.map((w) => [w.node, w.family, w.fromMs, w.toMs, w.endedBy])).toEqual([
      ['n1', 'pause', 1000, 5000, 'reset'],
      ['n1', 'partition', 6000, 8000, 'end'],
      ['n2', 'partition', 6000, 8000, 'end'],
    ]);
  });

  it('a heal-all closes every window of every family at once, and is no mark', () => {
    const { windows, marks } = faultWindows(
      [fault(1000, 'pause', ['n1']), fault(2000, 'kill', ['n2']), fault(4000, 'heal-all', [])],
      [],
      8000,
    );
    expect(windows.map((w) => [w.node, w.family, w.fromMs, w.toMs, w.endedBy])).toEqual([
      ['n1', 'pause', 1000, 4000, 'stop'],
      ['n2', 'kill', 2000, 4000, 'stop'],
    ]);
    expect(marks).toEqual([]);
  });

  it('ignores faults that errored or were skipped, and a stop without nodes ends its family everywhere', () => {
    const { windows } = faultWindows(
      [
        fault(0, 'start-packet', ['n1', 'n2']),
        fault(500, 'kill', ['n1'], 'error'),
        fault(600, 'member-remove', [], 'skipped'),
        fault(1000, 'stop-packet', []),
      ],
      [],
      2000,
    );
    expect(windows.map((w) => [w.node, w.family, w.toMs])).toEqual([
      ['n1', 'packet', 1000],
      ['n2', 'packet', 1000],
    ]);
  });

  it('starts a new window when a partition changes shape, and marks faults of no family', () => {
    const { windows, marks } = faultWindows(
      [
        fault(0, 'start-partition', ['n1']),
        fault(1000, 'start-partition', ['n1']),
        fault(1500, 'custom-fault', ['n2']),
      ],
      [],
      2000,
    );
    expect(windows.map((w) => [w.fromMs, w.toMs])).toEqual([
      [0, 1000],
      [1000, 2000],
    ]);
    expect(marks).toEqual([{ node: 'n2', f: 'custom-fault', atMs: 1500 }]);
  });
});

describe('familyIntervals', () => {
  it('unites the windows of a family over nodes into the intervals to shade', () => {
    const { windows } = faultWindows(
      [
        fault(0, 'kill', ['n1']),
        fault(500, 'kill', ['n2']),
        fault(1000, 'start', ['n1']),
        fault(2000, 'start', ['n2']),
        fault(3000, 'kill', ['n3']),
      ],
      [4000],
      5000,
    );
    expect(familyIntervals(windows)).toEqual([
      { family: 'kill', fromMs: 0, toMs: 2000, nodes: ['n1', 'n2'] },
      { family: 'kill', fromMs: 3000, toMs: 4000, nodes: ['n3'] },
    ]);
  });
});

describe('resetTimes', () => {
  it('puts a policy schedule reset at its last step end and a fixed schedule reset a schedule length after its start', () => {
    const schedules = [
      { idx: 0, startedMs: 0, endedMs: 9000, ops: 1, recoveryMs: 5, followed: false, verdicts: null },
      { idx: 1, startedMs: 9000, endedMs: 30_000, ops: 1, recoveryMs: 5, followed: false, verdicts: null },
    ];
    const steps = [
      { schedule: 0, step: 0, startedMs: 0, endedMs: 2500, fault: null, state: null, newState: false },
      { schedule: 0, step: 1, startedMs: 2500, endedMs: 5000, fault: null, state: null, newState: false },
    ];
    expect(resetTimes(schedules, steps, 10_000, 40_000)).toEqual([5000, 19_000]);
  });
});

describe('timedFaults', () => {
  it('places stored faults on the run axis, says why a fault was skipped, and adds schedule lines not run', () => {
    const stored: StoredFault[] = [
      {
        id: 1,
        schedule: 1,
        step: 0,
        atMs: 100,
        f: 'pause',
        value: 'all',
        nodes: [],
        outcome: 'skipped',
        error: null,
        trigger: null,
        links: null,
      },
    ];
    const ops: Op[] = [
      {
        index: 0,
        time: 12_000_000_000,
        type: 'info',
        process: 'nemesis',
        f: 'kill',
        value: ['$V'],
        error: 'skipped: $V is not bound',
      },
      { index: 1, time: 12_500_000_000, type: 'info', process: 'nemesis', f: 'kill', value: ['n1'] },
    ];
    const schedules = [
      { idx: 0, startedMs: 0, endedMs: 10_000, ops: 1, recoveryMs: 5, followed: false, verdicts: null },
      {
        idx: 1,
        startedMs: 10_000,
        endedMs: null,
        ops: null,
        recoveryMs: null,
        followed: false,
        verdicts: null,
      },
    ];
    expect(timedFaults(stored, schedules, ops)).toEqual([
      {
        schedule: 1,
        step: 0,
        atMs: 10_100,
        f: 'pause',
        value: 'all',
        nodes: [],
        outcome: 'skipped',
        error: 'no node it could act on',
        grudge: null,
      },
      {
        schedule: 1,
        step: null,
        atMs: 12_000,
        f: 'kill',
        value: ['$V'],
        nodes: [],
        outcome: 'skipped',
        error: '$V is not bound',
        grudge: null,
      },
    ]);
  });
});
