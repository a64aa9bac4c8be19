import { describe, expect, it } from 'vitest';

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
    // Packet parameters in words, not the value's JSON.
    expect(text()).toContain('  [01:15.0] schedule 2 start-packet:all loss 10%, delay 50 ms on n1 (ok)\n');
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
    expect(text()).toContain('| ops ok 40 fail 2 fail (refused) 37 info 1 |');
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
});
