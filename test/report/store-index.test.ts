import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import type { ReplayOf } from '../../src/store/replay-of.js';
import { RunStore } from '../../src/store/run-store.js';
import { listRuns, storeTree, writeStoreIndex } from '../../src/report/store-index.js';
import { writeRunReport } from '../../src/report/write-run-report.js';
import { fakeRun } from './_helpers/fake-run.js';

/** A finished try of a bug stored as replay and shrink store them, finding `found` (kind/name). */
function tryRun(store: string, replayOf: ReplayOf, found: readonly [string, string][]): string {
  const run = RunStore.create(store, {
    id: `try-${replayOf.kind}-${replayOf.candidate ?? 'x'}-${replayOf.try}`,
    system: 'kvraft',
    seed: 5,
    policy: 'schedule',
    config: { steps: 4, stepMs: 1000, replayOf },
  });
  for (const [kind, name] of found) {
    run.bug({
      schedule: 0,
      kind,
      name,
      message: 'm',
      evidence: {},
      faultSchedule: [],
      seed: 5,
      foundAtMs: 10,
    });
  }
  run.finish('complete', { elapsedMs: 100 });
  run.close();
  return run.dir;
}

describe('writeStoreIndex', () => {
  const run = fakeRun();
  afterAll(() => {
    rmSync(join(run.store, '..'), { recursive: true, force: true });
  });

  it('lists each run with its outcome, and links its report once it has one', async () => {
    let index = writeStoreIndex(run.store);
    expect(index.html).toBe(join(run.store, 'index.html'));
    expect(index.runs.map((r) => r.dir)).toEqual([run.dir]);
    expect(readFileSync(index.html, 'utf8')).toContain(`mallory report ${run.dir}`);
    await writeRunReport(run.dir);
    index = writeStoreIndex(run.store);
    const page = readFileSync(index.html, 'utf8');
    const rel = run.dir.slice(run.store.length + 1);
    expect(page).toContain(`<a href="${rel}/report.html">report</a>`);
    expect(page).toContain('class="status-complete">complete');
    // The run's verdict, its schedules' merged: the fake run's linearizability finding makes it invalid.
    expect(index.runs[0].verdict).toBe(false);
    expect(page).toContain('<td class="verdict-invalid">invalid</td>');
    expect(page).toContain('1: linearizability/register');
  });

  it('shows replay and shrink tries under the bug they replay, not as campaigns', () => {
    const bugDir = join(run.dir, 'bugs', '1');
    const finding = { kind: 'linearizability', name: 'register' };
    const base = { bugDir, run: run.dir, bug: 1, finding };
    const replays = [0, 1].map((i) =>
      tryRun(
        run.store,
        { ...base, kind: 'replay', try: i },
        i === 0 ? [['linearizability', 'register']] : [],
      ),
    );
    const shrinks = [
      tryRun(run.store, { ...base, kind: 'shrink', candidate: 0, try: 0 }, [['linearizability', 'register']]),
      tryRun(run.store, { ...base, kind: 'shrink', candidate: 1, try: 0 }, [['crash', 'panic']]),
    ];
    // A try of a bug whose run is not in this store.
    const elsewhere = '/elsewhere/store/kvraft/20260101T000000-000Z';
    const orphan = tryRun(
      run.store,
      { kind: 'replay', bugDir: join(elsewhere, 'bugs', '3'), run: elsewhere, bug: 3, finding, try: 0 },
      [],
    );

    const runs = listRuns(run.store);
    expect(runs).toHaveLength(6);
    const tree = storeTree(runs);
    // The campaign alone is a campaign: a run stored without the field (before it existed) too.
    expect(tree.campaigns.map((r) => r.dir)).toEqual([run.dir]);
    const underBug = tree.tries
      .get(run.dir)
      ?.get(bugDir)
      ?.map((r) => r.dir);
    expect(new Set(underBug)).toEqual(new Set([...replays, ...shrinks]));
    expect(tree.orphans.map((r) => r.dir)).toEqual([orphan]);

    const page = readFileSync(writeStoreIndex(run.store).html, 'utf8');
    // One campaign row; the tries folded under bug #1 with what they found.
    expect(page.match(/<tr class="campaign">/g)).toHaveLength(1);
    expect(page).toContain('1 campaign, and 5 replay or shrink tries of their bugs');
    expect(page).toContain(
      'bug #1 (linearizability/register): 2 replay tries, 1 reproduced; 2 shrink tries over 2 candidates, 1 reproduced',
    );
    const details = page.slice(page.indexOf('<details>'), page.indexOf('</details>'));
    for (const dir of [...replays, ...shrinks]) {
      expect(details).toContain(dir.slice(run.store.length + 1));
    }
    expect(details).toContain('shrink of candidate 1, try 1');
    expect(details.match(/class="reproduced">reproduced/g)).toHaveLength(2);
    // The orphan is listed apart, with the bug it replays.
    const apart = page.slice(page.indexOf('<h2>Replay and shrink tries of bugs not in this store</h2>'));
    expect(apart).toContain(join(elsewhere, 'bugs', '3'));
    expect(apart).toContain(orphan.slice(run.store.length + 1));
    expect(details).not.toContain(orphan.slice(run.store.length + 1));
  });
});
