/**
 * Linearizability search speed on single-register histories, in-process on one thread, each case
 * checked `RUNS` times after a warm-up and its median printed:
 *
 * - unique values: every write writes a value of its own (as the register workload does), 10
 *   clients, 500 ops, with and without info ops and cas, linearizable and with one stale read;
 * - many info ops: 20k ops on one key, 12 clients, 30% info, 6 values;
 * - the 102 Jepsen etcd histories published with Porcupine (total and slowest).
 *
 * Run: `npx tsx bench/check-search.ts [runs]`.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import type { Op } from '../src/core/op.js';
import { Rng } from '../src/core/random.js';
import { readHistoryFile } from '../src/check/history/read-history.js';
import { checkOps } from '../src/check/linearizable.js';
import { generateKvHistory } from '../test/check/generate-history.js';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const DEFAULT_RUNS = 5;
const SEEDS = [1, 2, 3] as const;
const UNIQUE_OPS = 500;
const UNIQUE_CLIENTS = 10;
const UNIQUE_INFO_RATE = 0.05;
/** A stale read returns a value written at least this many writes before the one it should see. */
const STALE_BY_WRITES = 20;
const TIME_LIMIT_MS = 60_000;

function dataDir(): string {
  const beside = path.resolve(REPO_ROOT, '..', 'shared', 'data');
  return existsSync(beside) ? beside : '/work/shared/data';
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/**
 * The history with one ok read, late in it, changed to return a value overwritten long before it
 * began: not linearizable.
 */
function withStaleRead(ops: readonly Op[], seed: number): Op[] {
  const rng = new Rng(seed);
  const reads = ops.flatMap((op, i) =>
    op.type === 'ok' && op.f === 'read' && typeof op.value === 'number' && op.value > STALE_BY_WRITES * 2
      ? [i]
      : [],
  );
  const at = reads[Math.floor(reads.length * (0.5 + 0.5 * rng.next()))];
  const value = ops[at].value as number;
  return ops.map((op, i) =>
    i === at ? { ...op, value: value - STALE_BY_WRITES - rng.int(STALE_BY_WRITES) } : op,
  );
}

interface Case {
  readonly name: string;
  readonly histories: readonly (readonly Op[])[];
  /** What every history of the case must be judged, to catch a wrong verdict. */
  readonly expected: boolean;
}

function uniqueCases(): Case[] {
  const cases: Case[] = [];
  for (const infoRate of [0, UNIQUE_INFO_RATE]) {
    for (const cas of [false, true]) {
      const histories = SEEDS.map((seed) => [
        ...generateKvHistory({
          seed,
          ops: UNIQUE_OPS,
          clients: UNIQUE_CLIENTS,
          keys: 1,
          kv: false,
          uniqueValues: true,
          infoRate,
          writeRate: cas ? 0.3 : 0.5,
        }),
      ]);
      const name = `unique ${UNIQUE_CLIENTS}×${UNIQUE_OPS}, ${infoRate * 100}% info, ${cas ? 'read/write/cas' : 'read/write'}`;
      cases.push({ name: `${name}, linearizable`, histories, expected: true });
      cases.push({
        name: `${name}, one stale read`,
        histories: histories.map((ops, i) => withStaleRead(ops, SEEDS[i])),
        expected: false,
      });
    }
  }
  return cases;
}

function manyInfoCase(): Case {
  const histories = SEEDS.map((seed) => [
    ...generateKvHistory({ seed, ops: 20_000, clients: 12, keys: 1, infoRate: 0.3, values: 6, kv: false }),
  ]);
  return { name: 'many info: 12 clients × 20k ops, 30% info, 6 values', histories, expected: true };
}

/** The slowest history's time and the total, over the histories of one case, in one run. */
async function timeCase(c: Case): Promise<{ maxMs: number; totalMs: number }> {
  let maxMs = 0;
  let totalMs = 0;
  for (const ops of c.histories) {
    const start = performance.now();
    const result = await checkOps(ops, { model: 'cas-register', timeLimitMs: TIME_LIMIT_MS });
    const ms = performance.now() - start;
    if (result.valid !== c.expected) {
      throw new Error(
        `${c.name}: a history was judged ${String(result.valid)}, expected ${String(c.expected)}`,
      );
    }
    maxMs = Math.max(maxMs, ms);
    totalMs += ms;
  }
  return { maxMs, totalMs };
}

async function etcdCase(): Promise<Case[]> {
  const dir = path.join(dataDir(), 'porcupine-etcd');
  const rows = readFileSync(path.join(dir, 'expected.csv'), 'utf8').trim().split('\n').slice(1);
  const byVerdict = new Map<boolean, Op[][]>([
    [true, []],
    [false, []],
  ]);
  for (const row of rows) {
    const [file, verdict] = row.split(',');
    byVerdict.get(verdict === 'linearizable')!.push([...(await readHistoryFile(path.join(dir, file))).ops]);
  }
  return [...byVerdict].map(([expected, histories]) => ({
    name: `etcd ${histories.length} ${expected ? 'linearizable' : 'not linearizable'} histories`,
    histories,
    expected,
  }));
}

async function main(): Promise<void> {
  const runs = Number(process.argv[2] ?? DEFAULT_RUNS);
  const cases = [...uniqueCases(), manyInfoCase(), ...(await etcdCase())];
  for (const c of cases) await timeCase(c);
  console.log(
    `median of ${runs} runs after a warm-up; per case, the slowest history and the total over its histories`,
  );
  for (const c of cases) {
    const times = [];
    for (let run = 0; run < runs; run++) times.push(await timeCase(c));
    const maxMs = median(times.map((t) => t.maxMs));
    const totalMs = median(times.map((t) => t.totalMs));
    console.log(`${c.name}: slowest ${maxMs.toFixed(1)} ms, total ${totalMs.toFixed(1)} ms`);
  }
}

await main();
