import { describe, expect, it } from 'vitest';

import { replayOf, type ReplayableBug } from '../../src/campaign/replay.js';
import type { ScheduleHeader } from '../../src/campaign/schedule-file.js';
import { replayOfConfig } from '../../src/store/replay-of.js';

const HEADER = { finding: { kind: 'linearizability', name: 'not-linearizable' } } as ScheduleHeader;

function bug(dir: string, scheduleFile = `${dir}/schedule.jsonl`): ReplayableBug {
  return { dir, header: HEADER, scheduleFile };
}

describe('replayOf (what a replay or shrink try stores about the bug it replays)', () => {
  it("names the bug's run and id when its directory is a run's bugs/<id>", () => {
    const run = '/s/kvraft/20261206T024727-451Z';
    expect(replayOf(bug(`${run}/bugs/2`), 1)).toEqual({
      kind: 'replay',
      bugDir: `${run}/bugs/2`,
      run,
      bug: 2,
      finding: HEADER.finding,
      try: 1,
    });
    // A shrink candidate's tries run another schedule file of the same bug.
    expect(replayOf(bug(`${run}/bugs/2`, `${run}/bugs/2/shrink/4.jsonl`), 0, 4)).toMatchObject({
      kind: 'shrink',
      run,
      bug: 2,
      candidate: 4,
      try: 0,
    });
  });

  it('leaves the run out for a bug directory that is not inside one', () => {
    const of = replayOf(bug('/tmp/copied-bug'), 0);
    expect(of).toEqual({ kind: 'replay', bugDir: '/tmp/copied-bug', finding: HEADER.finding, try: 0 });
  });

  it('is read back from a stored configuration; a campaign, or a run stored before, has none', () => {
    const of = replayOf(bug('/s/kvraft/r/bugs/1'), 0);
    expect(replayOfConfig({ steps: 12, replayOf: of })).toEqual(of);
    expect(replayOfConfig({ steps: 12 })).toBeUndefined();
    expect(replayOfConfig({ replayOf: { kind: 'campaign' } })).toBeUndefined();
  });
});
