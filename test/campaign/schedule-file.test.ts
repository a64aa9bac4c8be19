import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import {
  formatBugSchedule,
  readSchedule,
  readScheduleHeader,
  type ScheduleHeader,
} from '../../src/campaign/schedule-file.js';

describe('readSchedule', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mallory-sched-'));
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });
  const write = (text: string): string => {
    const file = join(dir, `s${Math.random()}.jsonl`);
    writeFileSync(file, text);
    return file;
  };

  it('reads entries in time order, with comments and recorded nodes', () => {
    const file = write(
      '# kill the leader, then bring it back\n{"atMs": 5000, "f": "start", "value": "all"}\n\n{"atMs": 1000, "f": "kill", "value": "leader", "nodes": ["n2"]}\n',
    );
    expect(readSchedule(file)).toEqual([
      { atMs: 1000, f: 'kill', value: 'leader', nodes: ['n2'] },
      { atMs: 5000, f: 'start', value: 'all' },
    ]);
  });

  it('names the file and line of a bad entry', () => {
    expect(() => readSchedule(write('{"atMs": 1, "f": "kill"}\n{"atMs": 2, "f": "explode"}\n'))).toThrow(
      /:2: f:/,
    );
    expect(() => readSchedule(write('not json\n'))).toThrow(/:1: not JSON/);
    expect(() => readSchedule(join(dir, 'missing.jsonl'))).toThrow(/cannot read schedule file/);
  });

  it.each([
    [
      '{"atMs": 1, "f": "kill", "value": "n9"}',
      'value: kill takes one, minority, majority, all, leader or a list of nodes, not "n9"; to name a node write "nodes": ["n9"]',
    ],
    [
      '{"atMs": 1, "f": "start-partition", "value": "isolated"}',
      'value: start-partition takes halves, isolate, majorities-ring, bridge, leader or a list of nodes, not "isolated"',
    ],
    [
      '{"atMs": 1, "f": "start-packet", "value": {"target": "n2", "lossPct": 10}}',
      'value.target: start-packet takes one, minority, majority, all, leader or a list of nodes, not "n2"',
    ],
    [
      '{"atMs": 1, "f": "start-packet", "value": {"target": ["n9"], "lossPct": 10}}',
      'value.target: no node n9 in this run (its nodes are n1, n2, n3)',
    ],
    ['{"atMs": 1, "f": "kill", "value": ["n9"]}', 'value: no node n9 in this run (its nodes are n1, n2, n3)'],
    [
      '{"atMs": 1, "f": "start-partition", "groups": [["n1", "n1"], ["n1"]]}',
      'groups: n1 is named twice; each node belongs to one group',
    ],
    [
      '{"atMs": 1, "f": "start-partition", "groups": [["*"], ["*"]]}',
      'groups: * is in two groups; it stands for the nodes no other group names, so put it in one',
    ],
    [
      '{"atMs": 1, "f": "start-partition", "groups": [["n1"], ["n2", "n3"], ["*"]]}',
      'groups: * stands for no node here (the other groups name all of n1, n2, n3): drop it',
    ],
  ])('refuses before the run a line that names what the run lacks: %s', (line, problem) => {
    const file = write(`{"atMs": 0, "f": "kill", "value": "one"}\n${line}\n`);
    expect(() => readSchedule(file, ['n1', 'n2', 'n3'])).toThrow(`${file}:2: ${problem}`);
  });

  it('takes every target, shape and node list a line may name', () => {
    const lines = [
      ...['one', 'minority', 'majority', 'all', 'leader'].map((t) => ({ f: 'kill', value: t })),
      ...['halves', 'isolate', 'majorities-ring', 'bridge', 'leader'].map((v) => ({
        f: 'start-partition',
        value: v,
      })),
      { f: 'start-partition', groups: [['n1'], ['*']] },
      { f: 'start-packet', value: { target: ['n2'], lossPct: 5 } },
      { f: 'stop-partition', value: null },
      { f: 'kill', value: ['n3'] },
    ];
    const file = write(lines.map((l) => JSON.stringify({ atMs: 1, ...l })).join('\n'));
    expect(readSchedule(file, ['n1', 'n2', 'n3'])).toHaveLength(lines.length);
  });

  it('a bug schedule keeps its header and its errored faults, and replays every fault', () => {
    const header: ScheduleHeader = {
      system: 'etcd',
      nodes: 3,
      seed: 3,
      bugs: [],
      workload: 'register',
      rate: 100,
      steps: 12,
      stepMs: 2500,
      network: 'auto',
      schedule: 2,
      finding: { kind: 'crash', name: 'unexpected-exit' },
    };
    const file = write(
      formatBugSchedule(header, [
        { atMs: 100, f: 'member-remove', value: 'one', nodes: ['n1'] },
        { atMs: 2600, f: 'member-add', value: 'one', nodes: [], outcome: 'error', error: 'no quorum' },
      ]),
    );
    expect(readScheduleHeader(file)).toEqual(header);
    expect(readSchedule(file)).toEqual([
      { atMs: 100, f: 'member-remove', value: 'one', nodes: ['n1'] },
      { atMs: 2600, f: 'member-add', value: 'one', nodes: [] },
    ]);
    // A hand-written schedule has no header.
    expect(readScheduleHeader(write('{"atMs": 1, "f": "kill", "value": "one"}\n'))).toBeUndefined();
    expect(() => readScheduleHeader(write('{"mallory": {"system": "etcd"}}\n'))).toThrow(
      /:1: mallory\.nodes: /,
    );
  });

  it('a bug header keeps the settings of its run and stated durability, for the replay', () => {
    const header: ScheduleHeader = {
      system: 'redis',
      nodes: 1,
      seed: 1,
      bugs: [],
      settings: { appendfsync: 'everysec' },
      durability: 'disk-loss',
      workload: 'register',
      rate: 100,
      steps: 8,
      stepMs: 2500,
      network: 'auto',
      schedule: 0,
      finding: { kind: 'durability', name: 'broken-contract' },
    };
    const file = write(
      formatBugSchedule(header, [{ atMs: 3000, f: 'lose-unfsynced', value: 'all', nodes: ['n1'] }]),
    );
    expect(readScheduleHeader(file)).toEqual(header);
    expect(() =>
      readScheduleHeader(write(JSON.stringify({ mallory: { ...header, durability: 'total' } }) + '\n')),
    ).toThrow(/mallory\.durability/);
  });

  it('a bug header keeps the warm-up of a paced run, and its quiet periods are heal-all lines', () => {
    const header: ScheduleHeader = {
      system: 'kvraft',
      nodes: 3,
      seed: 4,
      bugs: [],
      workload: 'register',
      rate: 100,
      steps: 6,
      stepMs: 2000,
      network: 'auto',
      warmupMs: 3000,
      schedule: 0,
      finding: { kind: 'linearizability', name: 'lost-write' },
    };
    const file = write(
      formatBugSchedule(header, [
        { atMs: 10, f: 'kill', value: 'one', nodes: ['n2'] },
        { atMs: 4001, f: 'heal-all', value: null, nodes: [] },
      ]),
    );
    expect(readScheduleHeader(file)).toEqual(header);
    expect(readSchedule(file)).toEqual([
      { atMs: 10, f: 'kill', value: 'one', nodes: ['n2'] },
      { atMs: 4001, f: 'heal-all', value: null, nodes: [] },
    ]);
    expect(() =>
      readScheduleHeader(write(JSON.stringify({ mallory: { ...header, warmupMs: -1 } }) + '\n')),
    ).toThrow(/mallory\.warmupMs/);
  });
});
