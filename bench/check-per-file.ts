/**
 * Where a small history's check time goes: the 102 Jepsen etcd histories published with Porcupine
 * (60–70 ops each), checked in one process pass after pass, each pass's median and summed time per
 * file printed. The first pass runs the checker's code cold (interpreted, then compiled as it gets
 * hot); later passes show what the check itself costs. `mallory check` on many files is the first
 * pass.
 *
 * `npx tsx bench/check-per-file.ts [passes=5]`
 */
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';

import { defaultModel } from '../src/check/history/default-model.js';
import { readHistoryFile } from '../src/check/history/read-history.js';
import { checkOps } from '../src/check/linearizable.js';

const PASSES = Number(process.argv[2] ?? 5);
const beside = path.resolve(import.meta.dirname, '..', '..', 'shared', 'data', 'porcupine-etcd');
const dir = existsSync(beside) ? beside : '/work/shared/data/porcupine-etcd';
const files = readdirSync(dir).filter((f) => f.endsWith('.log'));
const histories = [];
for (const file of files) {
  try {
    histories.push(await readHistoryFile(path.join(dir, file)));
  } catch {
    // etcd_095.log is empty
  }
}
console.log(`${histories.length} histories from ${dir}`);
for (let pass = 1; pass <= PASSES; pass++) {
  const times: number[] = [];
  for (const history of histories) {
    const start = performance.now();
    await checkOps(history.ops, { model: defaultModel(history) });
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  const sum = times.reduce((a, b) => a + b, 0);
  const median = times[times.length >> 1];
  console.log(`pass ${pass}: median ${median.toFixed(3)} ms per file, sum ${sum.toFixed(1)} ms`);
}
