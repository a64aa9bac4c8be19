import { appendFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import {
  describeDependence,
  recordReplay,
  REPLAYS_FILE,
  stateDependence,
} from '../../src/store/replay-record.js';

describe("a bug's recorded replays: does the finding depend on the state earlier schedules left?", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'mallory-replays-'));
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('says nothing of a bug never replayed', () => {
    expect(stateDependence(dir)).toBeUndefined();
  });

  it('sums each start over its replays; a line cut short by a crash is skipped', () => {
    recordReplay(dir, { atMs: 1, start: 'checkpoint', reproduced: 3, tries: 3 });
    recordReplay(dir, { atMs: 2, start: 'checkpoint', reproduced: 4, tries: 7 });
    appendFileSync(join(dir, REPLAYS_FILE), '{"atMs": 3, "start": "fre');
    const d = stateDependence(dir);
    expect(d).toEqual({ checkpoint: { reproduced: 7, tries: 10 }, fresh: null, dependsOnState: false });
    expect(describeDependence(d!)).toBe('replayed from its checkpoint 7/10, from empty data dirs not tried');
  });

  it('depends on state when the checkpoint reproduces in a majority and a fresh start never', () => {
    recordReplay(dir, { atMs: 1, start: 'checkpoint', reproduced: 8, tries: 10 });
    recordReplay(dir, { atMs: 2, start: 'fresh', reproduced: 0, tries: 10 });
    const d = stateDependence(dir)!;
    expect(d.dependsOnState).toBe(true);
    expect(describeDependence(d)).toBe(
      'the finding depends on the state the schedules before it left: from its checkpoint 8/10, from empty data dirs 0/10',
    );
  });

  it('does not when a fresh start reproduces it too, or the checkpoint only in half', () => {
    recordReplay(dir, { atMs: 1, start: 'checkpoint', reproduced: 5, tries: 10 });
    recordReplay(dir, { atMs: 2, start: 'fresh', reproduced: 0, tries: 10 });
    expect(stateDependence(dir)?.dependsOnState).toBe(false);
    recordReplay(dir, { atMs: 3, start: 'checkpoint', reproduced: 10, tries: 10 });
    recordReplay(dir, { atMs: 4, start: 'fresh', reproduced: 1, tries: 10 });
    expect(stateDependence(dir)).toEqual({
      checkpoint: { reproduced: 15, tries: 20 },
      fresh: { reproduced: 1, tries: 20 },
      dependsOnState: false,
    });
  });
});
