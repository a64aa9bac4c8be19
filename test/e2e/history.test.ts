import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import type { Op } from '../../src/core/op.js';
import { disposeSandbox, jsonOf, mallory, type Sandbox, sandbox } from './helpers.js';

/**
 * ack-before-commit's schedule (the leader isolated 10 s, its acknowledged writes lost when the
 * partition heals), then a node killed and another paused that nothing undoes before the schedule
 * ends: the reset must restart the one and resume the other, and say so in the history.
 */
const SCHEDULE = [
  { atMs: 2500, f: 'start-partition', value: 'leader' },
  { atMs: 12_500, f: 'stop-partition', value: null },
  { atMs: 13_500, f: 'kill', value: 'one' },
  { atMs: 14_000, f: 'pause', value: 'one' },
];

interface RunJson {
  readonly runDir: string;
  readonly bugs: readonly { readonly dir: string }[];
}

interface RegisterExplanation {
  readonly key: string;
  readonly anomaly: string;
}

interface RegisterEvidence {
  readonly result: { readonly valid: boolean; readonly ops: number; readonly partitions: number };
  readonly explanations: readonly RegisterExplanation[];
}

interface CheckJson {
  readonly valid: boolean | 'unknown';
  readonly files: readonly {
    readonly format: string;
    readonly valid: boolean | 'unknown';
    readonly result: RegisterEvidence['result'];
    readonly explanations: readonly RegisterExplanation[];
  }[];
}

describe('the history tells the whole story (kvraft, real processes)', () => {
  const boxes: Sandbox[] = [];
  afterEach(() => {
    for (const b of boxes.splice(0)) disposeSandbox(b);
  });

  it('has the reset and its restarts as nemesis ops, the final reads marked after them, and its export checks as the run did', async () => {
    const box = sandbox();
    boxes.push(box);
    const schedule = join(box.store, '..', 'schedule.jsonl');
    writeFileSync(schedule, SCHEDULE.map((line) => JSON.stringify(line)).join('\n') + '\n');
    const run = await mallory(
      [
        ...['run', '--bug', 'ack-before-commit', '--schedule', schedule, '--steps', '6', '--time', '5m'],
        ...['--seed', '7', '--store', box.store, '--json'],
      ],
      box,
    );
    expect(run.code, run.stderr).toBe(1);
    const { runDir, bugs } = jsonOf(run) as RunJson;
    const ops = readFileSync(join(runDir, 'history.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Op);

    // The schedule's kill and pause, as the nemesis wrote them (the completion names the node).
    const nemesis = ops.filter((op) => op.process === 'nemesis');
    const killed = nemesis.filter((op) => op.f === 'kill').at(-1)?.value as string[];
    const paused = nemesis.filter((op) => op.f === 'pause').at(-1)?.value as string[];
    expect(killed).toHaveLength(1);
    expect(paused).toHaveLength(1);
    const pauseAt = nemesis.findLastIndex((op) => op.f === 'pause');
    // The terminal gives each fault at its time since the run started, as the history does (not
    // since the schedule started: the kill's line is 13.5 s into the schedule, after the cluster's
    // start and the first schedule's checkpoint) — when its outcome came, the history's completion.
    const line = /\[(\d\d):(\d\d\.\d)\] schedule 1 kill:one on (n\d) \(ok\)/.exec(run.stderr);
    expect(line, run.stderr).not.toBeNull();
    expect(line![3]).toBe(killed[0]);
    const terminalS = Number(line![1]) * 60 + Number(line![2]);
    const killDone = nemesis.filter((op) => op.f === 'kill').at(-1)!;
    expect(Math.abs(terminalS - killDone.time / 1e9)).toBeLessThan(0.25);

    // The reset: every client op of the schedule ended, then the paused node resumed and the killed
    // one started, each an info pair (Jepsen's final generator), in that order.
    const reset = nemesis.slice(pauseAt + 1);
    expect(reset.map((op) => [op.type, op.f, op.value])).toEqual([
      ['info', 'resume', paused],
      ['info', 'resume', paused],
      ['info', 'start', killed],
      ['info', 'start', killed],
    ]);
    for (const op of reset) expect(op.error).toBeUndefined();
    const resetStart = reset[0].index;
    const resetEnd = reset.at(-1)!.index;

    // The final reads: every client op after the reset is one, marked, and none is before it.
    const clients = ops.filter((op) => op.process !== 'nemesis');
    const after = clients.filter((op) => op.index > resetEnd);
    expect(after.length).toBeGreaterThan(0);
    for (const op of after) expect(op).toMatchObject({ f: 'read', final: true });
    expect(clients.filter((op) => op.final === true && op.index < resetStart)).toEqual([]);
    expect(clients.filter((op) => op.index > resetStart && op.index < resetEnd)).toEqual([]);
    // Times are ns since the run started and never go back.
    for (let i = 1; i < ops.length; i++) expect(ops[i].time).toBeGreaterThanOrEqual(ops[i - 1].time);

    // The export says the same in EDN.
    const edn = join(box.store, '..', 'history.edn');
    const exported = await mallory(['export', '--edn', runDir, '--out', edn], box);
    expect(exported.code, exported.stderr).toBe(0);
    const lines = readFileSync(edn, 'utf8').trim().split('\n');
    expect(lines).toHaveLength(ops.length);
    expect(lines[resetEnd]).toBe(
      `{:type :info, :f :start, :value [${JSON.stringify(killed[0])}], :process :nemesis, :time ${ops[resetEnd].time}, :index ${resetEnd}}`,
    );
    for (const line of lines.slice(resetEnd + 1)) expect(line).toMatch(/:f :read, .*:final\? true\}$/);

    // Checked again from the export alone: the run's verdict, keys and anomalies.
    const evidence = JSON.parse(readFileSync(join(bugs[0].dir, 'evidence.json'), 'utf8')) as RegisterEvidence;
    const checked = await mallory(['check', edn, '--json'], box);
    expect(checked.code, checked.stderr).toBe(1);
    const [file] = (jsonOf(checked) as CheckJson).files;
    expect(file.format).toBe('edn');
    expect(file.valid).toBe(false);
    expect(evidence.result.valid).toBe(false);
    expect(file.result.ops).toBe(evidence.result.ops);
    expect(file.result.partitions).toBe(evidence.result.partitions);
    const named = (list: readonly RegisterExplanation[]): string[] =>
      list.map((e) => `${e.key} ${e.anomaly}`).sort();
    expect(named(file.explanations)).toEqual(named(evidence.explanations));
    expect(file.explanations.length).toBeGreaterThan(0);
  });
});
