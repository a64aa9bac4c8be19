/**
 * The key-value counterpart of check-per-file.ts: Porcupine's key-value histories (its
 * `test_data/kv/*.txt`: appends, puts and gets of strings, 1, 10 and 50 clients, 38 to 2,024 ops),
 * checked with the string-kv model in one process pass after pass; per file its verdict, the first
 * pass's time (the checker's code cold, as `mallory check` on one file runs it) and the median of
 * the passes, then the sums. Porcupine's data is not part of this repository: give the directory
 * that holds those files.
 *
 * `npx tsx bench/check-kv-per-file.ts DIR [passes=5]`
 */
import { readdirSync } from 'node:fs';
import path from 'node:path';

import { defaultModel } from '../src/check/history/default-model.js';
import { readHistoryFile } from '../src/check/history/read-history.js';
import { checkOps } from '../src/check/linearizable.js';

const dir = process.argv[2];
if (dir === undefined) {
  console.error('usage: npx tsx bench/check-kv-per-file.ts DIR [passes=5] (DIR: Porcupine test_data/kv)');
  process.exit(2);
}
const PASSES = Number(process.argv[3] ?? 5);
const files = readdirSync(dir)
  .filter((f) => f.endsWith('.txt'))
  .sort();
const histories = await Promise.all(files.map((f) => readHistoryFile(path.join(dir, f))));
const models = histories.map((history) => defaultModel(history));
const times = files.map((): number[] => []);
const verdicts = files.map((): unknown => undefined);
for (let pass = 0; pass < PASSES; pass++) {
  for (const [i, history] of histories.entries()) {
    const start = performance.now();
    const result = await checkOps(history.ops, { model: models[i] });
    times[i].push(performance.now() - start);
    verdicts[i] = result.valid;
  }
}
const median = (values: readonly number[]): number => [...values].sort((a, b) => a - b)[values.length >> 1];
let firstSum = 0;
let medianSum = 0;
for (const [i, file] of files.entries()) {
  const first = times[i][0];
  const mid = median(times[i]);
  firstSum += first;
  medianSum += mid;
  console.log(
    `${file.padEnd(12)} ${String(histories[i].ops.length).padStart(5)} events  valid=${String(verdicts[i]).padEnd(5)}  first ${first.toFixed(1).padStart(7)} ms  median ${mid.toFixed(1).padStart(7)} ms`,
  );
}
console.log(
  `sum over ${files.length} files: first pass ${firstSum.toFixed(1)} ms, medians ${medianSum.toFixed(1)} ms`,
);
