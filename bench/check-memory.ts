/**
 * The linearizability check's memory bound: a history whose search grows without end (5,000 ops,
 * 100 clients, one register, every write a value of its own, 5% info ops) checked by `mallory
 * check` under a bound. Prints the verdict, the time, the check process's peak resident set (its
 * own `maxRSS`, written at its exit by a hook loaded with `--import`) and the bound; the bound holds when the peak is under it.
 * Without `--memory-limit` the bound is the default (half the machine's memory). Needs
 * `npm run build`.
 *
 * `npx tsx bench/check-memory.ts [memory-limit, e.g. 2g; default: the default bound] [time-limit=20m]`
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

import { defaultMemoryLimitBytes } from '../src/check/linearizable.js';
import { describeBytes, parseByteSize } from '../src/check/_internals/memory-limit.js';
import { generateKvHistory } from '../test/check/generate-history.js';

const REPO = resolve(import.meta.dirname, '..');
const BIN = join(REPO, 'bin', 'mallory.js');
const LIMIT = process.argv[2];
const TIME_LIMIT = process.argv[3] ?? '20m';
/** Loaded first into the check's process: at its exit, writes its peak resident set (KiB) to a file. */
const PEAK_HOOK = `import { writeFileSync } from 'node:fs';
process.on('exit', () => writeFileSync(process.env.PEAK_FILE, String(process.resourceUsage().maxRSS)));
`;

const dir = mkdtempSync(join(tmpdir(), 'mallory-bench-check-memory-'));
const file = join(dir, 'history.jsonl');
const hook = join(dir, 'peak.mjs');
const peakFile = join(dir, 'peak');
writeFileSync(hook, PEAK_HOOK);
const ops = generateKvHistory({
  seed: 1,
  ops: 5000,
  clients: 100,
  keys: 1,
  kv: false,
  uniqueValues: true,
  infoRate: 0.05,
});
writeFileSync(file, [...ops].map((op) => JSON.stringify(op)).join('\n') + '\n');
const bound = LIMIT === undefined ? defaultMemoryLimitBytes() : parseByteSize(LIMIT);
const args = ['--import', pathToFileURL(hook).href, BIN, 'check', file, '--time-limit', TIME_LIMIT];
if (LIMIT !== undefined) args.push('--memory-limit', LIMIT);
const started = performance.now();
const child = spawn(process.execPath, args, {
  cwd: REPO,
  stdio: ['ignore', 'pipe', 'inherit'],
  env: { ...process.env, PEAK_FILE: peakFile },
});
let stdout = '';
child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
const forward = (): void => {
  child.kill('SIGINT');
};
process.once('SIGINT', forward);
child.once('exit', (code) => {
  process.off('SIGINT', forward);
  const peak = Number(readFileSync(peakFile, 'utf8')) * 1024;
  rmSync(dir, { recursive: true, force: true });
  const seconds = (performance.now() - started) / 1000;
  process.stdout.write(stdout);
  console.log(`bound         ${describeBytes(bound)}${LIMIT === undefined ? ' (the default)' : ''}`);
  console.log(`peak RSS      ${describeBytes(peak)} (${((100 * peak) / bound).toFixed(1)}% of the bound)`);
  console.log(`time          ${seconds.toFixed(1)} s, exit ${code}`);
  console.log(`within bound  ${peak <= bound ? 'yes' : 'NO'}`);
});
