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
