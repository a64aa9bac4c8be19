import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { mallory } from './_helpers/cli.js';
import { REPO_ROOT } from '../check/data-dir.js';

let dir: string;

beforeAll(async () => {
  if (!existsSync(path.join(REPO_ROOT, 'dist', 'cli', 'export.js'))) {
    throw new Error('dist/ is missing or stale: run `npm run build` first (npm test does)');
  }
  dir = await mkdtemp(path.join(tmpdir(), 'mallory-export-'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const HISTORY = [
  { index: 0, time: 10, type: 'info', process: 'nemesis', f: 'kill', value: ['n2', 'n3'] },
  {
    index: 1,
    time: 20,
    type: 'invoke',
    process: 0,
    f: 'txn',
    value: [
      ['r', 'x', null],
      ['append', 'y', 1],
    ],
    node: 'n1',
  },
  {
    index: 2,
    time: 30,
    type: 'invoke',
    process: 1,
    f: 'txn',
    value: [
      ['r', 'y', null],
      ['append', 'x', 1],
    ],
    node: 'n2',
  },
  {
    index: 3,
    time: 40,
    type: 'ok',
    process: 0,
    f: 'txn',
    value: [
      ['r', 'x', []],
      ['append', 'y', 1],
    ],
    node: 'n1',
  },
  {
    index: 4,
    time: 50,
    type: 'ok',
    process: 1,
    f: 'txn',
    value: [
      ['r', 'y', []],
      ['append', 'x', 1],
    ],
    node: 'n2',
  },
];

describe('mallory export --edn', () => {
  it("writes a run's history.jsonl as Jepsen history.edn that checks the same", async () => {
    const runDir = path.join(dir, 'store', 'kvraft', '20260101T000000-000Z');
    await mkdir(runDir, { recursive: true });
    await writeFile(path.join(runDir, 'history.jsonl'), HISTORY.map((op) => JSON.stringify(op)).join('\n'));
    const { code, stdout } = await mallory('export', '--edn', runDir);
    expect(code).toBe(0);
    expect(stdout.split('\n').slice(0, 2)).toEqual([
      '{:type :info, :f :kill, :value ["n2" "n3"], :process :nemesis, :time 10, :index 0}',
      '{:type :invoke, :f :txn, :value [[:r "x" nil] [:append "y" 1]], :process 0, :time 20, :index 1, :node "n1"}',
    ]);
    const out = path.join(dir, 'history.edn');
    expect((await mallory('export', '--edn', path.join(runDir, 'history.jsonl'), '--out', out)).code).toBe(0);
    expect(await readFile(out, 'utf8')).toBe(stdout);
    const fromJsonl = await mallory('check', path.join(runDir, 'history.jsonl'), '--json');
    const fromEdn = await mallory('check', out, '--json');
    expect(fromEdn.code).toBe(1);
    const anomalies = (doc: string): unknown =>
      (JSON.parse(doc) as { files: { anomalies: unknown }[] }).files[0].anomalies;
    expect(anomalies(fromEdn.stdout)).toEqual(anomalies(fromJsonl.stdout));
  });

  it("writes the register workload's keys as jepsen.independent tuples, and checks the same per key", async () => {
    // Key a is written, then key b read empty: linearizable key by key, not as one register.
    const ops = [
      { index: 0, time: 10, type: 'invoke', process: 0, f: 'write', value: ['s0-a', 1] },
      { index: 1, time: 20, type: 'ok', process: 0, f: 'write', value: ['s0-a', 1] },
      { index: 2, time: 30, type: 'invoke', process: 1, f: 'read', value: ['s0-b', null] },
      { index: 3, time: 40, type: 'ok', process: 1, f: 'read', value: ['s0-b', null] },
      { index: 4, time: 50, type: 'invoke', process: 1, f: 'cas', value: ['s0-a', [1, 2]] },
      { index: 5, time: 60, type: 'ok', process: 1, f: 'cas', value: ['s0-a', [1, 2]] },
      { index: 6, time: 70, type: 'info', process: 'nemesis', f: 'start-partition', value: ['n1'] },
    ];
    const jsonl = path.join(dir, 'keys.jsonl');
    await writeFile(jsonl, ops.map((op) => JSON.stringify(op)).join('\n'));
    const out = path.join(dir, 'keys.edn');
    expect((await mallory('export', '--edn', jsonl, '--out', out)).code).toBe(0);
    const lines = (await readFile(out, 'utf8')).trim().split('\n');
    expect(lines[1]).toBe(
      '{:type :ok, :f :write, :value #jepsen.independent.Tuple{:key "s0-a", :value 1}, :process 0, :time 20, :index 1}',
    );
    expect(lines[4]).toContain(':value #jepsen.independent.Tuple{:key "s0-a", :value [1 2]}');
    expect(lines[6]).toContain(':value ["n1"]');
    const fromJsonl = await mallory('check', jsonl);
    const fromEdn = await mallory('check', out);
    expect(fromJsonl.code).toBe(0);
    expect(fromEdn.code, fromEdn.stdout + fromEdn.stderr).toBe(0);
    // A read of key a that misses its write is caught in the EDN too.
    const stale = [
      ...ops.slice(0, 2),
      { ...ops[2], value: ['s0-a', null] },
      { ...ops[3], value: ['s0-a', null] },
    ];
    await writeFile(jsonl, stale.map((op) => JSON.stringify(op)).join('\n'));
    expect((await mallory('export', '--edn', jsonl, '--out', out)).code).toBe(0);
    expect((await mallory('check', out)).code).toBe(1);
  });

  it('exits 2 without a format, or for a path with no history', async () => {
    const none = await mallory('export', dir);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('say which format to export: --edn');
    const missing = await mallory('export', '--edn', path.join(dir, 'nowhere'));
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('does not exist: give a run directory');
  });
});
