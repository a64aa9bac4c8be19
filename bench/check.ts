/**
 * Linearizability checker speed: the 102 Jepsen etcd histories published with Porcupine, then
 * generated kv histories of 10k, 100k and 1M ops with 10 and 50 clients. Each generated case runs
 * in its own child process so its peak RSS is its own. Run: `npx tsx bench/check.ts`.
 */
import { fork } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

import type { Op } from '../src/core/op.js';
import { readHistoryFile } from '../src/check/history/read-history.js';
import * as fromSource from '../src/check/linearizable.js';
import { checkOps } from '../src/check/linearizable.js';
import { generateKvHistory } from '../test/check/generate-history.js';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SEED = 20261129;
const KEYS = 10;
const INFO_RATE = 0.01;
const HEAP_SAMPLE_EVERY_OPS = 50_000;
const SIZES = [10_000, 100_000, 1_000_000] as const;
const CLIENTS = [10, 50] as const;
const MB = 1024 * 1024;
const COMPILED = path.join(REPO_ROOT, 'dist', 'check', 'linearizable.js');

/** `source`: this checkout's TS on one thread; `compiled`: dist/ with its default worker threads. */
type Build = 'source' | 'compiled';

function dataDir(): string {
  const beside = path.resolve(REPO_ROOT, '..', 'shared', 'data');
  return existsSync(beside) ? beside : '/work/shared/data';
}

async function benchEtcd(): Promise<void> {
  const dir = path.join(dataDir(), 'porcupine-etcd');
  const expected = readFileSync(path.join(dir, 'expected.csv'), 'utf8').trim().split('\n').slice(1);
  const histories = await Promise.all(
    expected.map(async (row) => {
      const [file, verdict] = row.split(',');
      return { file, verdict, ops: (await readHistoryFile(path.join(dir, file))).ops };
    }),
  );
  for (const pass of ['first pass (cold JIT)', 'second pass (warm)']) {
    let totalMs = 0;
    let slowest = { file: '', ms: 0 };
    let wrong = 0;
    for (const { file, verdict, ops } of histories) {
      const start = performance.now();
      const result = await checkOps(ops, { model: 'cas-register' });
      const ms = performance.now() - start;
      totalMs += ms;
      if (ms > slowest.ms) slowest = { file, ms };
      if ((result.valid === true ? 'linearizable' : 'not-linearizable') !== verdict) wrong++;
    }
    console.log(
      `etcd ${histories.length} histories, ${pass}: total ${totalMs.toFixed(0)} ms, slowest ${slowest.file} ${slowest.ms.toFixed(1)} ms, wrong verdicts ${wrong}`,
    );
  }
}

interface CaseResult {
  readonly ops: number;
  readonly clients: number;
  readonly valid: unknown;
  readonly partitions: number;
  readonly generateMs: number;
  readonly totalMs: number;
  readonly peakRssMb: number;
  readonly peakHeapMb: number;
  readonly cacheEntries: number;
  /** History entries (invokes and completions). */
  readonly entries: number;
}

/** Runs in the child: generate-only pass for timing, then generate-and-check as one stream. */
async function runCase(ops: number, clients: number, build: Build): Promise<CaseResult> {
  const { checkOpStream } =
    build === 'compiled' ? ((await import(pathToFileURL(COMPILED).href)) as typeof fromSource) : fromSource;
  const options = { seed: SEED, ops, clients, keys: KEYS, infoRate: INFO_RATE };
  const genStart = performance.now();
  let entries = 0;
  for (const op of generateKvHistory(options)) entries = op.index + 1;
  const generateMs = performance.now() - genStart;
  let peakHeap = 0;
  function* sampled(): Generator<Op> {
    let n = 0;
    for (const op of generateKvHistory(options)) {
      if (++n % HEAP_SAMPLE_EVERY_OPS === 0) peakHeap = Math.max(peakHeap, process.memoryUsage().heapUsed);
      yield op;
    }
  }
  const start = performance.now();
  const result = await checkOpStream(sampled(), { model: 'kv' });
  const totalMs = performance.now() - start;
  peakHeap = Math.max(peakHeap, process.memoryUsage().heapUsed);
  return {
    ops: result.ops,
    clients,
    valid: result.valid,
    partitions: result.partitions,
    generateMs,
    totalMs,
    peakRssMb: (process.resourceUsage().maxRSS * 1024) / MB,
    peakHeapMb: peakHeap / MB,
    cacheEntries: result.cacheEntries,
    entries,
  };
}

function inChild(ops: number, clients: number, build: Build): Promise<CaseResult> {
  return new Promise((resolve, reject) => {
    const child = fork(fileURLToPath(import.meta.url), ['--case', String(ops), String(clients), build], {
      execArgv: process.execArgv,
    });
    child.once('message', (message) => {
      resolve(message as CaseResult);
    });
    child.once('error', reject);
    child.once('exit', (code) => {
      if (code !== 0) reject(new Error(`bench case ${ops}/${clients} exited with ${code}`));
    });
  });
}

async function main(): Promise<void> {
  const at = process.argv.indexOf('--case');
  if (at >= 0) {
    const result = await runCase(
      Number(process.argv[at + 1]),
      Number(process.argv[at + 2]),
      process.argv[at + 3] as Build,
    );
    process.send?.(result);
    return;
  }
  await benchEtcd();
  console.log(
    `kv histories: ${KEYS} keys, ${INFO_RATE * 100}% info ops, seed ${SEED}; time = generate + check, streamed`,
  );
  const builds: Build[] = existsSync(COMPILED) ? ['source', 'compiled'] : ['source'];
  if (builds.length === 1)
    console.log('(dist/ absent: run `npm run build` to also measure the compiled checker)');
  for (const ops of SIZES) {
    for (const clients of CLIENTS) {
      for (const build of ops === SIZES[SIZES.length - 1] ? builds : ['source' as const]) {
        const r = await inChild(ops, clients, build);
        console.log(
          `kv ${ops.toLocaleString('en')} ops (${r.entries.toLocaleString('en')} entries), ${clients} clients, ${build}: ` +
            `${String(r.valid)}, ${r.partitions} partitions, ` +
            `${(r.totalMs / 1000).toFixed(2)} s (generation alone ${(r.generateMs / 1000).toFixed(2)} s), ` +
            `peak RSS ${r.peakRssMb.toFixed(0)} MB, peak heap ${r.peakHeapMb.toFixed(0)} MB, ${r.cacheEntries} memo entries`,
        );
      }
    }
  }
}

await main();
