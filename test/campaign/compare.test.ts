import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { aucMetrics, mergeComparisons, parseArm } from '../../src/campaign/compare.js';

describe('parseArm', () => {
  it('reads a policy alone, or a policy with fault families added for that side', () => {
    expect(parseArm('random')).toEqual({ name: 'random', policy: 'random', addFaults: [], exchange: false });
    expect(parseArm(' adaptive+disk+clock ')).toEqual({
      name: 'adaptive+disk+clock',
      policy: 'adaptive',
      addFaults: ['disk', 'clock'],
      exchange: false,
    });
  });

  it('reads +exchange, anywhere after the policy, as a side whose campaigns share what they learn', () => {
    expect(parseArm('adaptive+exchange')).toEqual({
      name: 'adaptive+exchange',
      policy: 'adaptive',
      addFaults: [],
      exchange: true,
    });
    expect(parseArm('triggered+exchange+disk')).toEqual({
      name: 'triggered+exchange+disk',
      policy: 'triggered',
      addFaults: ['disk'],
      exchange: true,
    });
  });

  it('names what is allowed for an unknown policy or family', () => {
    expect(() => parseArm('greedy')).toThrow(
      /unknown policy "greedy": choose from adaptive, mallory, random, triggered/,
    );
    expect(() => parseArm('adaptive+floods')).toThrow(
      /unknown fault family "floods" in "adaptive\+floods": choose from partition/,
    );
  });
});

describe('aucMetrics', () => {
  it('is the step function’s mean over the budget, so reaching coverage sooner scores higher', () => {
    const early = aucMetrics(
      {
        event_types: [
          [0, 0],
          [1000, 10],
        ],
      },
      4000,
    );
    const late = aucMetrics(
      {
        event_types: [
          [0, 0],
          [3000, 10],
        ],
      },
      4000,
    );
    expect(early.event_types_auc).toBe(7.5);
    expect(late.event_types_auc).toBe(2.5);
  });

  it('ignores samples after the budget', () => {
    expect(
      aucMetrics(
        {
          m: [
            [0, 2],
            [1000, 100],
          ],
        },
        1000,
      ).m_auc,
    ).toBe(2);
  });
});

describe('mergeComparisons', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mallory-compare-'));
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });
  const run = (seed: number, states: number, bugAt: number | null) => ({
    seed,
    runDir: join(dir, 'gone', String(seed)),
    metrics: { states_causal: states },
    bugs: bugAt === null ? [] : [{ name: 'linearizability/lost-write', atMs: bugAt }],
  });
  const write = (name: string, body: object): string => {
    const file = join(dir, `${name}.json`);
    writeFileSync(file, JSON.stringify(body));
    return file;
  };

  it('pools the runs of several comparisons and recomputes Â12 and censored time to bug', () => {
    const a = write('a', {
      system: 'kvraft',
      timeMs: 60_000,
      policies: {
        adaptive: { runs: [run(1, 30, 10_000), run(2, 31, 20_000)] },
        random: { runs: [run(1, 20, null), run(2, 21, 50_000)] },
      },
    });
    const b = write('b', {
      system: 'kvraft',
      timeMs: 60_000,
      policies: {
        adaptive: { runs: [run(3, 32, 30_000)] },
        random: { runs: [{ ...run(3, 22, null), bugs: [{ name: 'crash/crash-text', atMs: 40_000 }] }] },
      },
    });
    const merged = mergeComparisons([a, b], join(dir, 'store'));
    expect(merged.policies.adaptive.runs.map((r) => r.seed)).toEqual([1, 2, 3]);
    const states = merged.comparisons.find((c) => c.metric === 'states_causal')!;
    expect(states).toMatchObject({
      policy: 'adaptive',
      baseline: 'random',
      a12: 1,
      mean: 31,
      baselineMean: 21,
    });
    const adaptive = merged.timeToBug.adaptive['linearizability/lost-write'];
    expect(adaptive).toMatchObject({ found: 3, runs: 3, medianMs: 20_000, minMs: 10_000, maxMs: 30_000 });
    expect(adaptive.a12Sooner).toBe(1);
    // random found it once in three: its median over all runs is "never".
    const random = merged.timeToBug.random['linearizability/lost-write'];
    expect(random).toMatchObject({ found: 1, runs: 3, medianMs: null, medianFoundMs: 50_000 });
    // The first finding of any kind: random's runs found a lost write or a crash, 2 in 3.
    expect(merged.timeToBug.random['(any)']).toMatchObject({
      found: 2,
      runs: 3,
      medianMs: 50_000,
      medianFoundMs: 45_000,
    });
    expect(merged.timeToBug.adaptive['crash/crash-text']).toMatchObject({ found: 0, medianMs: null });
    const written = JSON.parse(readFileSync(join(merged.dir, 'compare.json'), 'utf8')) as { system: string };
    expect(written.system).toBe('kvraft');
  });

  it('refuses comparisons of different budgets, and files that are not comparisons', () => {
    const a = write('c', { system: 'kvraft', timeMs: 60_000, policies: {} });
    const b = write('d', { system: 'kvraft', timeMs: 600_000, policies: {} });
    expect(() => mergeComparisons([a, b], join(dir, 'store'))).toThrow(/only like comparisons/);
    const bad = write('e', { hello: 1 });
    expect(() => mergeComparisons([bad], join(dir, 'store'))).toThrow(/not a compare.json/);
    expect(() => mergeComparisons([join(dir, 'nope')], join(dir, 'store'))).toThrow(/does not exist/);
  });
});
