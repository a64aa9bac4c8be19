import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { mallory } from './_helpers/cli.js';
import { REPO_ROOT } from '../check/data-dir.js';

type Row = readonly [process: number, type: string, f: string, value: string];

/** An EDN history from rows of process, type, f and the value as EDN text. */
function edn(...rows: readonly Row[]): string {
  return rows
    .map(
      ([process, type, f, value], index) =>
        `{:type :${type}, :f :${f}, :value ${value}, :process ${process}, :time ${index * 1000}, :index ${index}}\n`,
    )
    .join('');
}

/** Our history.jsonl from rows whose values are JSON. */
function jsonl(...rows: readonly (readonly [number, string, string, unknown])[]): string {
  return rows
    .map(([process, type, f, value], index) =>
      JSON.stringify({ index, time: index, type, process, f, value }),
    )
    .join('\n');
}

let dir: string;

async function file(name: string, content: string): Promise<string> {
  const at = path.join(dir, name);
  await writeFile(at, content);
  return at;
}

beforeAll(async () => {
  if (!existsSync(path.join(REPO_ROOT, 'dist', 'cli', 'check-txn.js'))) {
    throw new Error('dist/ is missing or stale: run `npm run build` first (npm test does)');
  }
  dir = await mkdtemp(path.join(tmpdir(), 'mallory-check-txn-'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Two transactions that each read what the other will append to: write skew (G2-item). */
const WRITE_SKEW = edn(
  [0, 'invoke', 'txn', '[[:r :x nil] [:append :y 1]]'],
  [1, 'invoke', 'txn', '[[:r :y nil] [:append :x 1]]'],
  [0, 'ok', 'txn', '[[:r :x []] [:append :y 1]]'],
  [1, 'ok', 'txn', '[[:r :y []] [:append :x 1]]'],
);

describe('mallory check on transactional histories', () => {
  it('exits 0 for a serializable list-append history.edn, guessing the model, under strict-serializable', async () => {
    const at = await file(
      'serial.edn',
      edn(
        [0, 'invoke', 'txn', '[[:append 1 1] [:r 1 nil]]'],
        [0, 'ok', 'txn', '[[:append 1 1] [:r 1 [1]]]'],
        [1, 'invoke', 'txn', '[[:r 1 nil] [:append 2 1]]'],
        [1, 'ok', 'txn', '[[:r 1 [1]] [:append 2 1]]'],
        [0, 'invoke', 'txn', '[[:r 1 nil] [:r 2 nil]]'],
        [0, 'ok', 'txn', '[[:r 1 [1]] [:r 2 [1]]]'],
      ),
    );
    const { code, stdout, stderr } = await mallory('check', at);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout).toMatch(/serial\.edn: strict-serializable \(list-append, 3 txns, [\d.]+ ms\)/);
    expect(stdout).toContain('  ruled out: none\n');
    expect(stdout).toContain(
      '  not ruled out: strict-serializable, serializable, snapshot-isolation, repeatable-read, read-committed, read-uncommitted\n',
    );
  });

  it('exits 1 for write skew, naming G2-item with its transactions, edges and the models ruled out', async () => {
    const at = await file('skew.edn', WRITE_SKEW);
    const { code, stdout } = await mallory('check', at, '--consistency', 'serializable');
    expect(code).toBe(1);
    expect(stdout).toMatch(/skew\.edn: NOT serializable \(list-append, 2 txns/);
    expect(stdout).toContain('  G2-item: T2 read key :x without 1, which T3 appended (rw); ');
    expect(stdout).toContain('    T2 -rw :x-> T3 -rw :y-> T2\n');
    expect(stdout).toContain(`    T2: process 0, ok txn [[:r :x []] [:append :y 1]], line 3\n`);
    expect(stdout).toContain('  ruled out: repeatable-read (and every stronger model)\n');
    expect(stdout).toContain('  not ruled out: snapshot-isolation, read-committed, read-uncommitted\n');
    const weaker = await mallory('check', at, '--consistency', 'snapshot-isolation');
    expect(weaker.code).toBe(0);
    expect(weaker.stdout).toMatch(
      /snapshot-isolation \(list-append.*\n {2}G2-item: .*\(allowed by snapshot-isolation\)/,
    );
  });

  it('exits 1 for a long fork under snapshot isolation, naming G-nonadjacent', async () => {
    const at = await file(
      'fork.edn',
      edn(
        [0, 'invoke', 'txn', '[[:append :x 1]]'],
        [0, 'ok', 'txn', '[[:append :x 1]]'],
        [1, 'invoke', 'txn', '[[:r :x nil] [:r :y nil]]'],
        [1, 'ok', 'txn', '[[:r :x [1]] [:r :y []]]'],
        [2, 'invoke', 'txn', '[[:append :y 1]]'],
        [2, 'ok', 'txn', '[[:append :y 1]]'],
        [3, 'invoke', 'txn', '[[:r :y nil] [:r :x nil]]'],
        [3, 'ok', 'txn', '[[:r :y [1]] [:r :x []]]'],
      ),
    );
    const { code, stdout } = await mallory('check', at, '--consistency', 'snapshot-isolation');
    expect(code).toBe(1);
    expect(stdout).toMatch(/fork\.edn: NOT snapshot-isolation \(list-append, 4 txns/);
    expect(stdout).toMatch(/\n {2}G-nonadjacent: T\d read key :[xy] without 1, which T\d appended \(rw\); /);
    expect(stdout).toContain('  ruled out: snapshot-isolation, repeatable-read (and every stronger model)\n');
    const weaker = await mallory('check', at, '--consistency', 'read-committed');
    expect(weaker.code).toBe(0);
  });

  it('exits 1 for read skew in a history.jsonl, naming G-single', async () => {
    const at = await file(
      'read-skew.jsonl',
      jsonl(
        [
          0,
          'invoke',
          'txn',
          [
            ['append', 'x', 1],
            ['append', 'y', 1],
          ],
        ],
        [
          1,
          'invoke',
          'txn',
          [
            ['r', 'x', null],
            ['r', 'y', null],
          ],
        ],
        [
          0,
          'ok',
          'txn',
          [
            ['append', 'x', 1],
            ['append', 'y', 1],
          ],
        ],
        [
          1,
          'ok',
          'txn',
          [
            ['r', 'x', []],
            ['r', 'y', [1]],
          ],
        ],
      ),
    );
    const { code, stdout } = await mallory('check', at, '--model', 'list-append');
    expect(code).toBe(1);
    expect(stdout).toContain('NOT strict-serializable (list-append, 2 txns');
    expect(stdout).toMatch(/^ {2}G-single: /m);
    expect(stdout).toContain('  ruled out: snapshot-isolation, repeatable-read (and every stronger model)\n');
  });

  it('exits 1 for a read of an aborted append (G1a), even under read-committed', async () => {
    const at = await file(
      'aborted.edn',
      edn(
        [0, 'invoke', 'txn', '[[:append :x 1]]'],
        [0, 'fail', 'txn', '[[:append :x 1]]'],
        [1, 'invoke', 'txn', '[[:r :x nil]]'],
        [1, 'ok', 'txn', '[[:r :x [1]]]'],
      ),
    );
    const { code, stdout } = await mallory('check', at, '--consistency', 'read-committed');
    expect(code).toBe(1);
    expect(stdout).toContain('NOT read-committed (list-append, 2 txns');
    expect(stdout).toContain('  G1a: T3 read key :x = [1], with 1, which T1 appended and then aborted\n');
    expect(stdout).toContain('    T1: process 0, fail txn [[:append :x 1]], line 2\n');
    expect(stdout).toContain('  ruled out: read-committed (and every stronger model)\n');
  });

  it('checks Elle r/w micro-ops under f read and write as rw-register, not as one register', async () => {
    const at = await file(
      'elle-rw.edn',
      edn(
        [0, 'invoke', 'write', '[[:w 1 2]]'],
        [0, 'ok', 'write', '[[:w 1 2]]'],
        [1, 'invoke', 'read', '[[:r 1 nil]]'],
        [1, 'ok', 'read', '[[:r 1 2]]'],
      ),
    );
    const { code, stdout } = await mallory('check', at);
    expect(code).toBe(0);
    expect(stdout).toMatch(/elle-rw\.edn: strict-serializable \(rw-register, 2 txns/);
    const register = await mallory('check', at, '--model', 'cas-register');
    expect(register.code).toBe(2);
    expect(register.stdout).toBe('');
    expect(register.stderr.trim().split('\n')).toEqual([
      `mallory check: ${at}: the values are transactions (micro-op lists such as [["r", k, v]]), which the cas-register model cannot read: use --model rw-register, or drop --model`,
    ]);
  });

  it('exits 2 with one line saying what to do when the values do not fit the model', async () => {
    const cases: [name: string, content: string, args: string[], message: RegExp][] = [
      [
        'bad-mop.edn',
        edn([0, 'invoke', 'txn', '[[:inc :x 1]]'], [0, 'ok', 'txn', '[[:inc :x 1]]']),
        [],
        /bad-mop\.edn:1: rw-register: op 0 \(process 0, invoke txn\): micro-op 0 \["inc",":x",1\] has f "inc": use \["w", key, value\] or \["r", key, null\]$/,
      ],
      [
        'appends.edn',
        WRITE_SKEW,
        ['--model', 'rw-register'],
        /appends\.edn:1: rw-register: .*micro-op 1 \["append",":y",1\] has f "append": .*\(it looks like list-append: try --model list-append\)$/,
      ],
      [
        'register.jsonl',
        jsonl([0, 'invoke', 'write', 3], [0, 'ok', 'write', 3]),
        ['--model', 'list-append'],
        /register\.jsonl:1: list-append: op 0 .*value is 3: .*\(not a transactional history: drop --model to check it for linearizability\)$/,
      ],
      [
        'plain.jsonl',
        jsonl([0, 'invoke', 'write', 3], [0, 'ok', 'write', 3]),
        ['--consistency', 'serializable'],
        /plain\.jsonl: not a transactional history .*--consistency is for --model list-append or rw-register/,
      ],
      [
        'unpaired.edn',
        edn([0, 'ok', 'txn', '[[:append :x 1]]']),
        [],
        /unpaired\.edn:1: list-append: op 0 .*completes no invoke/,
      ],
    ];
    for (const [name, content, args, message] of cases) {
      const at = await file(name, content);
      const { code, stdout, stderr } = await mallory('check', at, ...args);
      expect(code, name).toBe(2);
      expect(stdout, name).toBe('');
      const lines = stderr.trim().split('\n');
      expect(lines, name).toHaveLength(1);
      expect(lines[0], name).toMatch(message);
    }
    const both = await mallory(
      'check',
      path.join(dir, 'skew.edn'),
      '--model',
      'kv',
      '--consistency',
      'serializable',
    );
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('--consistency is for --model list-append or rw-register, not kv');
  });

  it('prints one JSON document with --json and writes an HTML page with --html', async () => {
    const at = await file('skew-json.edn', WRITE_SKEW);
    const html = path.join(dir, 'pages', 'skew.html');
    const { code, stdout } = await mallory('check', at, '--json', '--html', html);
    expect(code).toBe(1);
    const doc = JSON.parse(stdout) as { valid: unknown; files: Record<string, unknown>[] };
    expect(doc.valid).toBe(false);
    expect(doc.files).toHaveLength(1);
    expect(doc.files[0]).toMatchObject({
      file: at,
      format: 'edn',
      valid: false,
      model: 'list-append',
      consistency: 'strict-serializable',
      txns: 2,
      anomalyTypes: ['G2-item'],
      ruledOut: ['repeatable-read'],
      notRuledOut: ['snapshot-isolation', 'read-committed', 'read-uncommitted'],
      html,
      anomalies: [
        {
          type: 'G2-item',
          explanation: expect.stringMatching(/^G2-item: T2 read key :x without 1/) as unknown,
          txns: [
            expect.objectContaining({ name: 'T2', index: 2, process: 0, type: 'ok', line: 3 }),
            expect.objectContaining({ name: 'T3', index: 3, process: 1, type: 'ok', line: 4 }),
          ],
          edges: [
            { from: 2, to: 3, type: 'rw', key: ':x', read: null, value: 1 },
            { from: 3, to: 2, type: 'rw', key: ':y', read: null, value: 1 },
          ],
        },
      ],
    });
    const page = await readFile(html, 'utf8');
    expect(page).toContain('<p class="verdict invalid">not strict-serializable</p>');
    expect(page).toContain('<section id="G2-item"><h2>G2-item (1)</h2>');
    expect(page).toContain('<p class="cycle">T2 -rw :x-&#62; T3 -rw :y-&#62; T2</p>');
    expect(page).toContain('<tr data-index="3"><td>T3</td>');
  });
});
