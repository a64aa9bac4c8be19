import { describe, expect, it } from 'vitest';

import type { RunSummary } from '../../src/campaign/reporter.js';
import { ProgressReporter } from '../../src/cli/progress-reporter.js';

/** What the reporter wrote, as a terminal or a pipe would receive it. */
function capture(tty: boolean): { reporter: ProgressReporter; text: () => string } {
  let text = '';
  const out = { write: (chunk: string) => ((text += chunk), true) } as unknown as NodeJS.WriteStream;
  return { reporter: new ProgressReporter(out, tty), text: () => text };
}

describe('ProgressReporter', () => {
  it('says how finely a torn-write cut', () => {
    const { reporter, text } = capture(false);
    const torn = (granularity: 'sector' | 'byte'): void => {
      reporter.fault(
        {
          fault: { f: 'torn-write', value: 'one' },
          value: { target: 'one', seed: 9, granularity },
          nodes: ['n2'],
          outcome: 'ok',
        },
        0,
        2500,
        4100,
      );
    };
    torn('sector');
    torn('byte');
    expect(text()).toContain('  [00:04.1] schedule 1 torn-write:one on n2 (ok, whole 512-byte sectors)\n');
    expect(text()).toContain('  [00:04.1] schedule 1 torn-write:one on n2 (ok, torn inside a sector)\n');
  });

  it('prints every fault on a terminal too, with the reason for a skip or an error', () => {
    const { reporter, text } = capture(true);
    reporter.fault({ fault: { f: 'kill', value: 'one' }, nodes: ['n2'], outcome: 'ok' }, 0, 2500, 4100);
    reporter.fault(
      {
        fault: { f: 'member-add', value: 'one' },
        nodes: [],
        outcome: 'error',
        error: 'the cluster did not accept n3',
      },
      0,
      5000,
      6650,
    );
    reporter.fault(
      {
        fault: { f: 'member-remove', value: 'one' },
        nodes: [],
        outcome: 'skipped',
        error: 'too few members',
      },
      1,
      7500,
      71_420,
    );
    reporter.fault(
      {
        fault: { f: 'start-partition', value: 'halves' },
        nodes: ['n2', 'n1', 'n3'],
        links: [
          ['n2', 'n1'],
          ['n2', 'n3'],
          ['n1', 'n2'],
          ['n3', 'n2'],
        ],
        outcome: 'ok',
      },
      1,
      10_000,
      73_999,
    );
    reporter.fault(
      {
        fault: { f: 'start-packet', value: { target: 'all', lossPct: 10, delayMs: 50 } },
        nodes: ['n1'],
        outcome: 'ok',
      },
      1,
      12_000,
      75_000,
    );
    reporter.fault(
      {
        fault: { f: 'start-packet', value: { target: 'minority', lossPct: 30 } },
        nodes: ['n1', 'n2', 'n3'],
        links: [
          ['n1', 'n2'],
          ['n1', 'n3'],
          ['n2', 'n1'],
          ['n3', 'n1'],
        ],
        outcome: 'ok',
      },
      1,
      12_500,
      75_500,
    );
    // Packet parameters in words, not the value's JSON.
    expect(text()).toContain('  [01:15.0] schedule 2 start-packet:all loss 10%, delay 50 ms on n1 (ok)\n');
    // The links a packet fault degrades, between groups: not written as a partition's sides.
    expect(text()).toContain('start-packet:minority loss 30%: between n1 and n2,n3 (ok)\n');
    // Each fault at its time since the run started, as the report and check.html give it.
    expect(text()).toContain('  [00:04.1] schedule 1 kill:one on n2 (ok)\n');
    // A partition says which side is which, not only the nodes it touched.
    expect(text()).toContain('  [01:13.9] schedule 2 start-partition:halves: n1,n3 | n2 (ok)\n');
    expect(text()).toContain(
      '  [00:06.6] schedule 1 member-add:one (error: the cluster did not accept n3)\n',
    );
    expect(text()).toContain('  [01:11.4] schedule 2 member-remove:one (skipped: too few members)\n');
    // Never the time since the fault's own schedule started (2.5 s, 5 s, 7.5 s, 10 s).
    expect(text()).not.toMatch(/\b(?:2\.5|5\.0|7\.5|10\.0) ?s\b|\+\d/);
  });

  it('says fails from refused connections apart, in the progress line and the summary', () => {
    const { reporter, text } = capture(false);
    const progress = {
      elapsedMs: 20_000,
      budgetMs: 60_000,
      schedule: 0,
      step: 3,
      steps: 12,
      faults: 2,
      bugs: 0,
    };
    reporter.progress({ ...progress, ok: 40, fail: 2, info: 1, refused: 37, phase: 'fuzzing' });
    expect(text()).toContain('| ops ok 40 fail 2 + 37 refused info 1 |');
    reporter.progress({
      ...progress,
      elapsedMs: 40_000,
      ok: 50,
      fail: 2,
      info: 1,
      refused: 0,
      phase: 'fuzzing',
    });
    expect(text()).toContain('| ops ok 50 fail 2 info 1 |');
  });

  it('stamps a fault when its outcome came, and says when a slow one began, so no line goes back in time', () => {
    const { reporter, text } = capture(false);
    reporter.progress({
      elapsedMs: 40_000,
      budgetMs: 60_000,
      schedule: 0,
      step: 3,
      steps: 12,
      ok: 1,
      fail: 0,
      info: 0,
      faults: 1,
      bugs: 0,
      phase: 'fuzzing',
    });
    reporter.fault(
      { fault: { f: 'member-remove', value: 'one' }, nodes: ['n3'], outcome: 'ok' },
      0,
      9000,
      10_000,
      40_200,
    );
    reporter.fault(
      { fault: { f: 'kill', value: 'one' }, nodes: ['n2'], outcome: 'ok' },
      0,
      30_000,
      41_000,
      41_300,
    );
    expect(text()).toContain(
      '  [00:40.2] schedule 1 member-remove:one on n3 (ok, began 00:10.0, took 30.2 s)\n',
    );
    expect(text()).toContain('  [00:41.3] schedule 1 kill:one on n2 (ok)\n');
    const stamps = [...text().matchAll(/^\s*\[(\d\d):(\d\d)/gm)].map((m) => Number(m[1]) * 60 + Number(m[2]));
    expect(stamps).toEqual([...stamps].sort((a, b) => a - b));
  });

  it("names a bridge partition's bridging node, from the run's members as membership faults left them", () => {
    const { reporter, text } = capture(false);
    reporter.runStarted({
      runDir: '/r',
      system: 'kvraft',
      seed: 1,
      policy: 'random',
      nodes: ['n1', 'n2', 'n3', 'n4'],
    });
    reporter.fault({ fault: { f: 'member-remove', value: 'one' }, nodes: ['n4'], outcome: 'ok' }, 0, 0, 1000);
    const links: [string, string][] = [
      ['n1', 'n3'],
      ['n3', 'n1'],
    ];
    reporter.fault(
      { fault: { f: 'start-partition', value: 'bridge' }, nodes: ['n1', 'n3'], links, outcome: 'ok' },
      0,
      0,
      2000,
    );
    expect(text()).toContain('  [00:02.0] schedule 1 start-partition:bridge: n1 | n3, bridged by n2 (ok)\n');
  });

  it('sums up coverage and cost in one line, not a line per metric', () => {
    const { reporter, text } = capture(false);
    reporter.runEnded({
      status: 'complete',
      elapsedMs: 8800,
      schedules: 1,
      ops: { ok: 564, fail: 11, info: 14, refused: 3 },
      faults: 3,
      bugs: [],
      verdict: { valid: true, checkers: [] },
      metrics: {
        states_artifact: 2,
        states_causal: 3,
        event_types: 15,
        intra_pairs: 63,
        cross_pairs: 45,
        transitions_artifact: 3,
        transitions_causal: 3,
        windows: 3,
        fuzzer_peak_rss_mb: 111,
        events_shed: 0,
        net_events: 3900,
        state_arrival_pct: 100,
      },
      runDir: '/r',
    } as unknown as RunSummary);
    expect(text()).toContain('ops ok 564 fail 11 + 3 refused info 14, 3 faults, 0 bugs');
    expect(text()).toContain(
      '  coverage: states 2 artifact, 3 causal; transitions 3 artifact, 3 causal; 15 event types; event pairs 63 within a node, 45 across; fuzzer peak 111 MB, 0 events shed (every figure: results.json "coverage")\n',
    );
    expect(text()).not.toMatch(/^\s+[a-z_]+: \d+$/m);
    expect(text().trimEnd().split('\n').at(-1)).toBe('  run dir: /r');
  });
});
