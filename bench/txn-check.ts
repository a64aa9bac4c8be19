/**
 * Transactional checker speed: generated list-append histories of 10k, 100k and 1M transactions
 * (10 processes, 1-4 micro-ops, half reads, 10 keys in use at once, each retired after 100 appends
 * as in Jepsen's list-append workload, 1% failed and 1% indeterminate), checked as serializable
 * (data edges only) and as strict serializable (plus realtime edges). Each case runs in its own
 * child process so its peak RSS is its own; the RSS includes the history itself (generated reads
 * of an unchanged key share one array, as a parser's would not). Elle reports 100-160k txn/s.
 * Run: `npx tsx bench/txn-check.ts [sizes, e.g. 1000000; default 10000,100000,1000000] [runs=1]`;
 * with several runs, each case is run that many times in turn and its median check time printed too.
 */
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';

import { checkListAppend } from '../src/check/txn/check-list-append.js';
import type { ConsistencyModel } from '../src/check/txn/consistency-model.js';
import { generateListAppendHistory } from '../test/check/txn/generate-txn-history.js';

const SEED = 20261201;
const SIZES =
  process.argv[2] && !process.argv.includes('--case')
    ? process.argv[2].split(',').map(Number)
    : [10_000, 100_000, 1_000_000];
const RUNS = Number(process.argv[3] ?? '1');
const MODELS: readonly ConsistencyModel[] = ['serializable', 'strict-serializable'];
const MB = 1024 * 1024;

interface CaseResult {
  readonly txns: number;
  readonly model: ConsistencyModel;
  readonly valid: boolean;
  readonly generateMs: number;
  readonly checkMs: number;
  readonly rssAfterGenerateMb: number;
  readonly peakRssMb: number;
}

function runCase(txns: number, model: ConsistencyModel): CaseResult {
  const generateStart = performance.now();
  const ops = generateListAppendHistory({
    seed: SEED,
    txns,
    processes: 10,
    keys: 10,
    appendsPerKey: 100,
    maxMicroOps: 4,
    failRate: 0.01,
    infoRate: 0.01,
  });
  const generateMs = performance.now() - generateStart;
  const rssAfterGenerateMb = process.memoryUsage().rss / MB;
  const start = performance.now();
  const result = checkListAppend(ops, { model });
  const checkMs = performance.now() - start;
  return {
    txns,
    model,
    valid: result.valid,
    generateMs,
    checkMs,
    rssAfterGenerateMb,
    peakRssMb: (process.resourceUsage().maxRSS * 1024) / MB,
  };
}

function inChild(txns: number, model: ConsistencyModel): Promise<CaseResult> {
  return new Promise((resolve, reject) => {
    const child = fork(fileURLToPath(import.meta.url), ['--case', String(txns), model], {
      execArgv: process.execArgv,
    });
    child.once('message', (message) => {
      resolve(message as CaseResult);
    });
    child.once('error', reject);
    child.once('exit', (code) => {
      if (code !== 0) reject(new Error(`bench case ${txns}/${model} exited with ${code}`));
    });
  });
}

async function main(): Promise<void> {
  const at = process.argv.indexOf('--case');
  if (at >= 0) {
    process.send?.(runCase(Number(process.argv[at + 1]), process.argv[at + 2] as ConsistencyModel));
    return;
  }
  console.log(`list-append histories, seed ${SEED}; check time excludes generation`);
  const checkMs = new Map<string, number[]>();
  for (let run = 0; run < RUNS; run++) {
    for (const txns of SIZES) {
      for (const model of MODELS) {
        const r = await inChild(txns, model);
        const key = `${txns} ${model}`;
        checkMs.set(key, [...(checkMs.get(key) ?? []), r.checkMs]);
        print(r);
      }
    }
  }
  if (RUNS > 1) {
    for (const [key, times] of checkMs) {
      const sorted = [...times].sort((a, b) => a - b);
      const median = sorted[Math.floor(sorted.length / 2)] ?? 0;
      console.log(`${key}: median check ${(median / 1000).toFixed(2)} s over ${times.length} runs`);
    }
  }
}

function print(r: CaseResult): void {
  console.log(
    [
      `${String(r.txns).padStart(9)} txns`,
      r.model.padEnd(19),
      `valid=${r.valid}`,
      `check ${(r.checkMs / 1000).toFixed(2)} s`,
      `${Math.round(r.txns / (r.checkMs / 1000)).toLocaleString('en-US')} txn/s`,
      `RSS ${r.rssAfterGenerateMb.toFixed(0)} MB after generating, peak ${r.peakRssMb.toFixed(0)} MB`,
    ].join('  '),
  );
}

await main();
