import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import { disposeSandbox, findBug, mallory, registryFiles, type Sandbox, sandbox, jsonOf } from './helpers.js';

/**
 * ack-before-commit needs one fault: the leader cut off while it acknowledges writes. Around it,
 * faults it does not need: a pause undone at once, packet delay on one node. Shrinking must keep
 * the partition and drop the rest.
 */
const PADDED = [
  '{"atMs": 2500, "f": "start-partition", "value": "leader"}',
  // After the partition: a pause of the leader before it would leave no leader to cut off.
  '{"atMs": 3000, "f": "pause", "value": "one"}',
  '{"atMs": 3500, "f": "resume", "value": "all"}',
  '{"atMs": 4000, "f": "start-packet", "value": {"target": "one", "delayMs": 5}}',
  '{"atMs": 6000, "f": "stop-packet", "value": null}',
  '{"atMs": 12500, "f": "stop-partition", "value": null}',
];

interface ShrinkJson {
  readonly before: { readonly faults: number; readonly reproduced: number; readonly tries: number };
  readonly after?: { readonly faults: number; readonly reproduced: number; readonly tries: number };
  readonly shrunk?: string;
  readonly candidates: readonly { readonly faults: number; readonly kept: boolean; readonly file: string }[];
}

describe('mallory shrink (kvraft, real processes)', () => {
  const boxes: Sandbox[] = [];
  afterEach(() => {
    for (const b of boxes.splice(0)) disposeSandbox(b);
  });

  it('keeps the fault the bug needs, drops the others, and the result replays', async () => {
    const box = sandbox();
    boxes.push(box);
    const schedule = join(box.store, '..', 'padded.jsonl');
    writeFileSync(schedule, PADDED.join('\n') + '\n');
    const { bugDir } = await findBug(box, schedule);

    const shrink = await mallory(['shrink', bugDir, '--repeat', '1', '--store', box.store, '--json'], box);
    expect(shrink.code, shrink.stderr).toBe(0);
    const result = jsonOf(shrink) as ShrinkJson;
    expect(result.before).toEqual({ faults: 6, reproduced: 1, tries: 1 });
    expect(result.after?.reproduced).toBe(1);
    expect(result.after?.faults).toBeLessThanOrEqual(2);
    const shrunk = readFileSync(join(bugDir, 'shrunk.jsonl'), 'utf8').trim().split('\n');
    expect(JSON.parse(shrunk[0])).toMatchObject({
      mallory: { system: 'kvraft', bugs: ['ack-before-commit'] },
    });
    const kept = shrunk.slice(1).map((l) => JSON.parse(l) as { f: string; value: unknown });
    expect(kept).toContainEqual(expect.objectContaining({ f: 'start-partition', value: 'leader' }));
    expect(kept.map((k) => k.f)).not.toContain('pause');
    expect(kept.map((k) => k.f)).not.toContain('start-packet');
    // Every candidate tried is kept as evidence, and the terminal said what happened to each.
    expect(readdirSync(join(bugDir, 'shrink')).length).toBe(result.candidates.length);
    expect(result.candidates.every((c) => existsSync(c.file))).toBe(true);
    expect(shrink.stderr).toMatch(
      /shrink: candidate \d+, \d fault\(s\): reproduced [01]\/1 — (kept|dropped)/,
    );
    expect(shrink.stderr).toMatch(/shrink: the bug as recorded, 6 fault\(s\): reproduced 1\/1/);
    // What it shrinks and where each try starts, then one line per candidate, not each try's
    // campaign (--verbose).
    expect(shrink.stderr).toContain(`  start: from the checkpoint of schedule 1 (`);
    expect(shrink.stderr.trim().split('\n')).toHaveLength(2 + result.candidates.length);
    process.stdout.write(
      `shrink (kvraft ack-before-commit, padded): 6 → ${result.after?.faults} faults in ${result.candidates.length} candidates\n`,
    );

    const replay = await mallory(['replay', join(bugDir, 'shrunk.jsonl'), '--store', box.store], box);
    expect(replay.code, replay.stderr).toBe(1);
    expect(replay.stdout.trim()).toBe('reproduced 1/1 (linearizability/not-linearizable)');
    // The store's index: one campaign, every try of the shrink and the replay of its result under
    // the bug they replay.
    const n = result.candidates.length;
    const index = readFileSync(join(box.store, 'index.html'), 'utf8');
    expect(index.match(/<tr class="campaign">/g)).toHaveLength(1);
    expect(index).toContain(`1 campaign, and ${n + 1} replay or shrink tries of their bugs`);
    expect(index).toMatch(
      new RegExp(
        `bug #1 \\(linearizability/not-linearizable\\): 1 replay try, 1 reproduced; ${n} shrink tries over ${n} candidates, \\d+ reproduced`,
      ),
    );
    expect(registryFiles(box)).toEqual([]);
  }, 900_000);

  it('refuses to shrink a bug whose own schedule does not reproduce, and says the rate', async () => {
    const box = sandbox();
    boxes.push(box);
    const schedule = join(box.store, '..', 'one.jsonl');
    writeFileSync(schedule, PADDED[0] + '\n' + PADDED[5] + '\n');
    const { bugDir } = await findBug(box, schedule);
    // Without the switch the schedule is harmless: nothing to shrink against.
    const file = join(bugDir, 'source-schedule.jsonl');
    const header = readFileSync(join(bugDir, 'schedule.jsonl'), 'utf8').split('\n')[0];
    writeFileSync(
      file,
      header.replace('"bugs":["ack-before-commit"]', '"bugs":[]') + '\n' + readFileSync(schedule, 'utf8'),
    );
    const shrink = await mallory(['shrink', file, '--repeat', '1', '--store', box.store], box);
    expect(shrink.code, shrink.stderr).toBe(1);
    expect(shrink.stdout.trim()).toMatch(
      /^not shrunk: the bug's own schedule reproduced 0\/1, not a majority/,
    );
    expect(existsSync(join(bugDir, 'shrunk.jsonl'))).toBe(false);
  }, 300_000);

  it('refuses what is not a bug with one line', async () => {
    const box = sandbox();
    boxes.push(box);
    const r = await mallory(['shrink', '/nonexistent'], box);
    expect(r.code).toBe(2);
    expect(r.stderr.trim()).toBe(
      'mallory: /nonexistent is not a bug directory (no schedule.jsonl): give store/<system>/<run>/bugs/<id>',
    );
  });
});
