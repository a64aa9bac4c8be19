/**
 * Where a small history's check time goes: the 102 Jepsen etcd histories published with Porcupine
 * (60–70 ops each), checked in one process pass after pass, each pass's median and summed time per
 * file printed. The first pass runs the checker's code cold (interpreted, then compiled as it gets
 * hot); later passes show what the check itself costs. `mallory check` on many files is the first
 * pass.
 *
 * With `--per-file`, each file's verdict, first-pass time and median over the passes, to set
 * beside another checker's per-file times.
 *
 * `npx tsx bench/check-per-file.ts [passes=5] [--per-file]`
 */
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';

import { defaultModel } from '../src/check/history/default-model.js';
import { readHistoryFile } from '../src/check/history/read-history.js';
import { checkOps } from '../src/check/linearizable.js';

const args = process.argv.slice(2);
const PER_FILE = args.includes('--per-file');
const PASSES = Number(args.find((a) => a !== '--per-file') ?? 5);
const beside = path.resolve(import.meta.dirname, '..', '..', 'shared', 'data', 'porcupine-etcd');
const dir = existsSync(beside) ? beside : '/work/shared/data/porcupine-etcd';
const files = readdirSync(dir).filter((f) => f.endsWith('.log'));
const histories = [];
const names: string[] = [];
for (const file of files) {
  try {
    histories.push(await readHistoryFile(path.join(dir, file)));
    names.push(file);
  } catch {
    // etcd_095.log is empty
  }
}
// The model is chosen before the clock starts, as a checker given it (Porcupine's harness) would be.
const models = histories.map((history) => defaultModel(history));
const perFile = histories.map((): number[] => []);
const verdicts = histories.map((): unknown => undefined);
console.log(`${histories.length} histories from ${dir}`);
for (let pass = 1; pass <= PASSES; pass++) {
  const times: number[] = [];
  for (const [i, history] of histories.entries()) {
    const start = performance.now();
    const result = await checkOps(history.ops, { model: models[i] });
    const ms = performance.now() - start;
    times.push(ms);
    perFile[i].push(ms);
    verdicts[i] = result.valid;
  }
  times.sort((a, b) => a - b);
  const sum = times.reduce((a, b) => a + b, 0);
  const median = times[times.length >> 1];
  console.log(`pass ${pass}: median ${median.toFixed(3)} ms per file, sum ${sum.toFixed(1)} ms`);
}
if (PER_FILE) {
  for (const [i, name] of names.entries()) {
    const sorted = [...perFile[i]].sort((a, b) => a - b);
    console.log(
      `${name} valid=${String(verdicts[i])} first ${perFile[i][0].toFixed(3)} ms median ${sorted[sorted.length >> 1].toFixed(3)} ms`,
    );
  }
}
