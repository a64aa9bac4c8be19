import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { mallory } from './_helpers/cli.js';
import { REPO_ROOT, sharedDataDir } from '../check/data-dir.js';

const ETCD_DIR = path.join(sharedDataDir(), 'porcupine-etcd');

let dir: string;

beforeAll(async () => {
  if (!existsSync(path.join(REPO_ROOT, 'dist', 'cli', 'check.js'))) {
    throw new Error('dist/ is missing: run `npm run build` first (npm test does)');
  }
  dir = await mkdtemp(path.join(tmpdir(), 'mallory-check-cli-'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('mallory check', () => {
  it('exits 0 for a linearizable Jepsen etcd log, printing the verdict and time', async () => {
    const { code, stdout } = await mallory('check', path.join(ETCD_DIR, 'etcd_002.log'));
    expect(code).toBe(0);
    expect(stdout).toMatch(/etcd_002\.log: linearizable \(cas-register, 1 partition, \d+ ops, [\d.]+ ms\)/);
  });

  it('exits 1 for a non-linearizable one, naming the op that cannot be placed and its line', async () => {
    const { code, stdout } = await mallory('check', path.join(ETCD_DIR, 'etcd_000.log'));
    expect(code).toBe(1);
    expect(stdout).toContain('etcd_000.log: NOT linearizable');
    expect(stdout).toMatch(
      /after \d+ linearized ops the state is \d+, and read \d+ by process \d+ \(index \d+, line \d+\) cannot be placed/,
    );
  });

  it('prints one JSON document with --json and writes HTML with --html', async () => {
    const html = path.join(dir, 'out');
    const files = ['etcd_000.log', 'etcd_002.log'].map((f) => path.join(ETCD_DIR, f));
    const { code, stdout } = await mallory('check', ...files, '--json', '--html', html);
    expect(code).toBe(1);
    const doc = JSON.parse(stdout) as {
      valid: unknown;
      files: { file: string; valid: unknown; html: string }[];
    };
    expect(doc.valid).toBe(false);
    expect(doc.files.map((f) => [path.basename(f.file), f.valid])).toEqual([
      ['etcd_000.log', false],
      ['etcd_002.log', true],
    ]);
    const page = await readFile(path.join(html, 'etcd_000.log.html'), 'utf8');
    expect(page).toContain('class="op failing');
    expect(doc.files[1].html).toBe(path.join(html, 'etcd_002.log.html'));
  });

  it('guesses kv for a history.jsonl with [key, v] values and checks it by key', async () => {
    const file = path.join(dir, 'history.jsonl');
    const ops = [
      { index: 0, time: 1, type: 'invoke', process: 0, f: 'write', value: ['x', 1] },
      { index: 1, time: 2, type: 'ok', process: 0, f: 'write', value: ['x', 1] },
      { index: 2, time: 3, type: 'invoke', process: 1, f: 'read', value: ['y', null] },
      { index: 3, time: 4, type: 'ok', process: 1, f: 'read', value: ['y', 1] },
    ];
    await writeFile(file, ops.map((op) => JSON.stringify(op)).join('\n'));
    const { code, stdout } = await mallory('check', file);
    expect(code).toBe(1);
    expect(stdout).toMatch(/NOT linearizable \(kv, 2 partitions, 2 ops/);
    expect(stdout).toContain(
      'key "y": after 0 linearized ops the state is nil, and read ["y" 1] by process 1 (index 3, line 4)',
    );
    expect((await mallory('check', file, '--model', 'cas-register')).code).toBe(1);
  });

  it('--reads sequential accepts a stale read and still rejects a lost write', async () => {
    const op = (index: number, process: number, type: string, f: string, value: unknown): string =>
      JSON.stringify({ index, time: index, type, process, f, value });
    const stale = path.join(dir, 'stale.jsonl');
    await writeFile(
      stale,
      [
        op(0, 0, 'invoke', 'write', ['x', 1]),
        op(1, 0, 'ok', 'write', ['x', 1]),
        op(2, 0, 'invoke', 'write', ['x', 2]),
        op(3, 0, 'ok', 'write', ['x', 2]),
        op(4, 1, 'invoke', 'read', ['x', null]),
        op(5, 1, 'ok', 'read', ['x', 1]),
      ].join('\n'),
    );
    expect((await mallory('check', stale)).code).toBe(1);
    const relaxed = await mallory('check', stale, '--reads', 'sequential');
    expect(relaxed.code).toBe(0);
    expect(relaxed.stdout).toContain('stale.jsonl: linearizable (kv with sequential reads, 1 partition');
    const lost = path.join(dir, 'lost.jsonl');
    await writeFile(
      lost,
      [
        op(0, 0, 'invoke', 'write', ['x', 1]),
        op(1, 0, 'ok', 'write', ['x', 1]),
        op(2, 1, 'invoke', 'write', ['x', 2]),
        op(3, 1, 'ok', 'write', ['x', 2]),
        op(4, 2, 'invoke', 'cas', ['x', [1, 3]]),
        op(5, 2, 'ok', 'cas', ['x', [1, 3]]),
      ].join('\n'),
    );
    expect((await mallory('check', lost, '--reads', 'sequential')).code).toBe(1);
    const wrongModel = await mallory('check', stale, '--reads', 'sequential', '--model', 'set');
    expect(wrongModel.code).toBe(2);
    expect(wrongModel.stderr).toContain('--reads sequential is for the register models');
  });

  it('names the anomaly of every violating key, with the serving nodes, in text and JSON', async () => {
    const file = path.join(dir, 'two-keys.jsonl');
    const rows: [number, string, string, unknown, string][] = [
      [0, 'invoke', 'write', ['a', 1], 'n1'],
      [0, 'ok', 'write', ['a', 1], 'n1'],
      [1, 'invoke', 'read', ['a', null], 'n2'],
      [1, 'ok', 'read', ['a', null], 'n2'],
      [2, 'invoke', 'write', ['b', 5], 'n3'],
      [2, 'ok', 'write', ['b', 5], 'n3'],
      [3, 'invoke', 'read', ['b', null], 'n1'],
      [3, 'ok', 'read', ['b', 9], 'n1'],
    ];
    const ops = rows.map(([process, type, f, value, node], index) => ({
      index,
      time: index + 1,
      type,
      process,
      f,
      value,
      node,
    }));
    await writeFile(file, ops.map((op) => JSON.stringify(op)).join('\n'));
    const { code, stdout } = await mallory('check', file);
    expect(code).toBe(1);
    expect(stdout).toMatch(
      /key "a": lost acknowledged write: write 1 by process 0 on n1 .* read nil by process 1 on n2 .* returned the initial value/,
    );
    expect(stdout).toMatch(
      /key "b": read of a never-written value: read 9 by process 3 on n1 .* a value no op wrote/,
    );
    const json = await mallory('check', file, '--json');
    const doc = JSON.parse(json.stdout) as { files: { explanations: { key: string; anomaly: string }[] }[] };
    expect(doc.files[0].explanations.map((e) => [e.key, e.anomaly])).toEqual([
      ['a', 'lost-write'],
      ['b', 'never-written'],
    ]);
    const html = path.join(dir, 'two-keys.html');
    await mallory('check', file, '--html', html);
    const page = await readFile(html, 'utf8');
    expect(page).toMatch(/<p class="explanation">key &#34;a&#34;: lost acknowledged write: /);
    expect(page).toContain('data-node="n2"');
    expect(page).toContain('process 1 (n2)');
  });

  it('reads a Jepsen history.edn', async () => {
    const file = path.join(dir, 'history.edn');
    await writeFile(
      file,
      '{:type :invoke, :f :write, :value 3, :process 0, :time 1, :index 0}\n' +
        '{:type :ok, :f :write, :value 3, :process 0, :time 2, :index 1}\n' +
        '{:type :invoke, :f :read, :value nil, :process 1, :time 3, :index 2}\n' +
        '{:type :ok, :f :read, :value 3, :process 1, :time 4, :index 3}\n',
    );
    const { code, stdout } = await mallory('check', file, '--model', 'register');
    expect(code).toBe(0);
    expect(stdout).toContain('linearizable (register, 1 partition, 2 ops');
  });

  it('exits 2 with one line naming file:line for a malformed file', async () => {
    const file = path.join(dir, 'broken.jsonl');
    await writeFile(
      file,
      '{"index":0,"time":1,"type":"invoke","process":0,"f":"read","value":null}\n{"index":1,\n',
    );
    const { code, stderr, stdout } = await mallory('check', file);
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr.trim().split('\n')).toEqual([
      expect.stringMatching(new RegExp(`^mallory check: ${file}:2: not JSON`)),
    ]);
  });

  it('keeps integers beyond 2^53 exact: a read of 2^53 after a write of 2^53 + 1 is NOT linearizable', async () => {
    const file = path.join(dir, 'big.jsonl');
    await writeFile(
      file,
      [
        '{"index":0,"time":1,"type":"invoke","process":0,"f":"write","value":9007199254740993}',
        '{"index":1,"time":2,"type":"ok","process":0,"f":"write","value":9007199254740993}',
        '{"index":2,"time":3,"type":"invoke","process":1,"f":"read","value":null}',
        '{"index":3,"time":4,"type":"ok","process":1,"f":"read","value":9007199254740992}',
      ].join('\n'),
    );
    const { code, stdout } = await mallory('check', file, '--model', 'register');
    expect(code).toBe(1);
    expect(stdout).toContain(
      'the state is 9007199254740993, and read 9007199254740992 by process 1 (index 3, line 4) cannot be placed',
    );
    const json = await mallory('check', file, '--model', 'register', '--json');
    expect(json.code).toBe(1);
    expect(json.stdout).toContain('"value": 9007199254740992');
    expect((JSON.parse(json.stdout) as { valid: unknown }).valid).toBe(false);
  });

  it('exits 2 with one line naming file:line for bytes that are not UTF-8, deep nesting and absurd fields', async () => {
    const cases: [name: string, content: Buffer, message: string][] = [
      [
        'latin1.jsonl',
        Buffer.concat([
          Buffer.from(
            '{"type":"invoke","process":0,"f":"write","value":"ok"}\n{"type":"ok","process":0,"f":"write","value":"',
          ),
          Buffer.from([0xff]),
          Buffer.from('"}\n'),
        ]),
        ':2: not UTF-8',
      ],
      [
        'deep.edn',
        Buffer.from(`{:type :invoke, :f :read, :process 0}\n${'['.repeat(5000)}`),
        ':2: nested deeper than 100 levels',
      ],
      [
        'negative-time.jsonl',
        Buffer.from('{"type":"invoke","process":0,"f":"read","time":-1}\n'),
        ':1: time must be an integer >= 0',
      ],
    ];
    for (const [name, content, message] of cases) {
      const file = path.join(dir, name);
      await writeFile(file, content);
      const { code, stderr, stdout } = await mallory('check', file);
      expect(code, name).toBe(2);
      expect(stdout, name).toBe('');
      expect(stderr.trim().split('\n'), name).toEqual([
        expect.stringContaining(`mallory check: ${file}${message}`),
      ]);
    }
  });

  it('exits 2 naming the line of ops that do not pair up', async () => {
    const file = path.join(dir, 'orphan.jsonl');
    await writeFile(file, '\n{"index":7,"time":1,"type":"ok","process":0,"f":"read","value":null}\n');
    const { code, stderr } = await mallory('check', file);
    expect(code).toBe(2);
    expect(stderr).toMatch(new RegExp(`${file}:2: op 7 .*completes no invoke`));
  });

  /**
   * Writes of 0, 1 and 2, and a reader seeing the value change once more than there are writes:
   * not linearizable, but only trying the orders of the writes tells.
   */
  async function writeHardHistory(): Promise<string> {
    const file = path.join(dir, 'hard.jsonl');
    const writers = 18;
    const ops: object[] = [];
    for (let p = 0; p < writers; p++) ops.push({ type: 'invoke', process: p, f: 'write', value: p % 3 });
    for (let seen = 0; seen <= writers; seen++) {
      ops.push({ type: 'invoke', process: writers, f: 'read', value: null });
      ops.push({ type: 'ok', process: writers, f: 'read', value: seen % 3 });
    }
    for (let p = 0; p < writers; p++) ops.push({ type: 'ok', process: p, f: 'write', value: p % 3 });
    await writeFile(file, ops.map((op) => JSON.stringify(op)).join('\n'));
    return file;
  }

  it('exits 2 (unknown) when the time limit runs out, and for a bad --time-limit', async () => {
    const file = await writeHardHistory();
    const { code, stdout } = await mallory('check', file, '--time-limit', '1ms');
    expect(code).toBe(2);
    expect(stdout).toContain('unknown (time limit)');
    const bad = await mallory('check', file, '--time-limit', 'soon');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--time-limit: cannot read duration "soon"');
  });

  it('exits 2 (unknown) when the memory limit is reached, says the bound, and refuses a bad --memory-limit', async () => {
    const file = await writeHardHistory();
    // The same history: its search memoizes configurations by the million. Under a bound below
    // what the process already holds, the first growth of its tables passes the bound.
    const { code, stdout } = await mallory('check', file, '--memory-limit', '1m');
    expect(code).toBe(2);
    expect(stdout).toContain(
      'unknown (memory limit of 1 MiB: the search would take more; raise --memory-limit)',
    );
    const json = await mallory('check', file, '--memory-limit', '1m', '--json');
    const report = JSON.parse(json.stdout) as {
      valid: unknown;
      files: { result: { unknownBecause: string; memoryLimitBytes: number } }[];
    };
    expect(report.valid).toBe('unknown');
    expect(report.files[0].result).toMatchObject({ unknownBecause: 'memory', memoryLimitBytes: 1024 ** 2 });
    const bad = await mallory('check', file, '--memory-limit', 'lots');
    expect(bad.code).toBe(2);
    expect(bad.stderr.trim()).toBe(
      'mallory: --memory-limit: "lots" is not a size: give a number with an optional unit, e.g. 8g or 512m',
    );
  });
});
