import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { REPO_ROOT } from '../check/data-dir.js';

const MALLORY = path.join(REPO_ROOT, 'bin', 'mallory.js');
const FIXTURES = path.join(REPO_ROOT, 'test', 'fixtures', 'histories');
const TIMEOUT_MS = 60_000;

interface Outcome {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs the built CLI (`npm test` builds first), writing `stdin` to its standard input. */
function mallory(args: readonly string[], stdin = ''): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [MALLORY, ...args], { timeout: TIMEOUT_MS });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      resolve({ code, stdout, stderr });
    });
    child.stdin.end(stdin);
  });
}

function fixture(name: string): string {
  return path.join(FIXTURES, name);
}

let dir: string;

beforeAll(async () => {
  if (!existsSync(path.join(REPO_ROOT, 'dist', 'cli', 'check.js'))) {
    throw new Error('dist/ is missing: run `npm run build` first (npm test does)');
  }
  dir = await mkdtemp(path.join(tmpdir(), 'mallory-check-formats-'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

interface JsonFile {
  readonly file: string;
  readonly format?: string;
  readonly valid: unknown;
  readonly result?: { readonly model: string; readonly ops: number };
}

describe('mallory check on the formats Jepsen and its tools write', () => {
  it.each([
    ['unilog-2017.log', 'jepsen-log', 'cas-register', 5],
    ['logback-lin-kv.log', 'jepsen-log', 'kv', 5],
    ['history.txt', 'jepsen-txt', 'cas-register', 6],
    ['knossos.json', 'json', 'cas-register', 3],
    ['keywords.json', 'json', 'cas-register', 2],
  ])('%s: read as %s, checked as %s, linearizable', async (name, format, model, ops) => {
    const { code, stdout } = await mallory(['check', fixture(name), '--json']);
    expect(code).toBe(0);
    const [file] = (JSON.parse(stdout) as { files: JsonFile[] }).files;
    expect(file).toMatchObject({ format, valid: true, result: { model, ops } });
  });

  it('finds a stale read in a history.txt, naming its line', async () => {
    const { code, stdout } = await mallory(['check', fixture('stale-read.history.txt')]);
    expect(code).toBe(1);
    expect(stdout).toContain('read 1 by process 2 (index 5, line 6) cannot be placed');
  });

  it('checks an elle-cli JSON array of transactions against a consistency model', async () => {
    const { code, stdout } = await mallory(['check', fixture('elle-list-append.json')]);
    expect(code).toBe(0);
    expect(stdout).toContain('elle-list-append.json: strict-serializable (list-append, 2 txns');
  });
});

describe('mallory check -', () => {
  it('reads a history from standard input, whatever its format', async () => {
    const txt = await readFile(fixture('history.txt'), 'utf8');
    const { code, stdout } = await mallory(['check', '-'], txt);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^<stdin>: linearizable \(cas-register, 1 partition, 6 ops/);
    const stale = await readFile(fixture('stale-read.history.txt'), 'utf8');
    const json = await mallory(['check', fixture('knossos.json'), '-', '--json'], stale);
    expect(json.code).toBe(1);
    const files = (JSON.parse(json.stdout) as { files: JsonFile[] }).files;
    expect(files.map((f) => [f.file, f.valid])).toEqual([
      [fixture('knossos.json'), true],
      ['<stdin>', false],
    ]);
  });

  it('names <stdin> and the line when what it reads is not a history, and refuses - twice', async () => {
    const empty = await mallory(['check', '-'], '');
    expect(empty.code).toBe(2);
    expect(empty.stderr).toBe('mallory check: <stdin>:1: the file is empty\n');
    const bad = await mallory(['check', '-'], '0\t:invoke\t:read\tnil\n0\t:ok\t:read\t{:a\n');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toBe('mallory check: <stdin>:2: a map has a key without a value\n');
    const twice = await mallory(['check', '-', '-'], '');
    expect(twice.code).toBe(2);
    expect(twice.stderr).toContain('- (standard input) can be read once');
  });
});

describe('mallory check --initial', () => {
  it('starts registers at the value given: a read of 0 before any write is then linearizable', async () => {
    const file = fixture('knossos-starts-at-0.json');
    const nil = await mallory(['check', file]);
    expect(nil.code).toBe(1);
    expect(nil.stdout).toContain('after 0 linearized ops the state is nil, and read 0 by process 0');
    const zero = await mallory(['check', file, '--initial', '0']);
    expect(zero.code).toBe(0);
    expect(zero.stdout).toContain('knossos-starts-at-0.json: linearizable (cas-register');
    const edn = await mallory(['check', file, '--initial', 'nil']);
    expect(edn.code).toBe(1);
  });

  it('exits 2 with one line for a value it cannot read, or a history that is not of registers', async () => {
    const bad = await mallory(['check', fixture('knossos.json'), '--initial', '[1']);
    expect(bad.code).toBe(2);
    expect(bad.stderr.trim().split('\n')).toEqual([
      expect.stringMatching(/^mallory: --initial: cannot read "\[1" as JSON or EDN: write one value/),
    ]);
    const txn = await mallory(['check', fixture('elle-list-append.json'), '--initial', '0']);
    expect(txn.code).toBe(2);
    expect(txn.stderr).toBe(
      `mallory check: ${fixture('elle-list-append.json')}: --initial is for the register models (register, cas-register, kv), and this history is checked as list-append: drop --initial\n`,
    );
  });
});

describe('mallory check on input it cannot read', () => {
  it.each([
    ['notes.txt', 'some notes\nnot a history\n', 'notes.txt:1: not a history: expected history.jsonl'],
    ['op.txt', '0\t:invoke\t:read\tnil\nhello\n', 'op.txt:2: not a history.txt op: expected <process>'],
    ['type.txt', '0\t:invoke\t:read\tnil\n0\t:done\t:read\t3\n', 'type.txt:2: type must be one of'],
    [
      'log.log',
      'INFO [2017-03-30] jepsen worker 0 - jepsen.util 0  :invoke :cas [1\n',
      'log.log:1: "]" missing for the collection opened here',
    ],
    [
      'array.json',
      '[\n  {"type": "invoke", "f": "read", "process": 0},\n  7\n]\n',
      'array.json:3: an op must be a JSON object',
    ],
    [
      'broken.json',
      '[\n  {"type": "invoke",\n   "f" "read"}\n]\n',
      'broken.json:3: not JSON (unexpected """, expected ":" at column 8)',
    ],
    [
      'process.json',
      '[{"type":"invoke","f":"read","process":-1}]',
      'process.json:1: process must be an integer',
    ],
  ])('%s: exit 2, one line naming file:line', async (name, content, message) => {
    const file = path.join(dir, name);
    await writeFile(file, content);
    const { code, stdout, stderr } = await mallory(['check', file]);
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr.trim().split('\n')).toEqual([
      expect.stringContaining(`mallory check: ${path.join(dir, message)}`),
    ]);
  });
});
