import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { readSchedule } from '../../src/campaign/schedule-file.js';

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
});
