/**
 * The linearizability check's memory bound: a history whose search grows without end (5,000 ops,
 * 100 clients, one register, every write a value of its own, 5% info ops, and one read late in it
 * returning a value acknowledged 300 writes before) checked by `mallory
 * check` under a bound. Prints the verdict, the time, the check process's peak resident set (its
 * own `maxRSS`, written at its exit by a hook loaded with `--import`) and the bound; the bound holds when the peak is under it.
 * Without `--memory-limit` the bound is the default (half the machine's memory). Needs
 * `npm run build`.
 *
 * `npx tsx bench/check-memory.ts [memory-limit, e.g. 2g, or default: the default bound] [time-limit=20m]`
 * (`INFO_RATE=0.2` for another share of info ops).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

import { defaultMemoryLimitBytes } from '../src/check/linearizable.js';
import { describeBytes, parseByteSize } from '../src/core/memory-limit.js';
import { generateKvHistory } from '../test/check/generate-history.js';

const REPO = resolve(import.meta.dirname, '..');
const BIN = join(REPO, 'bin', 'mallory.js');
const LIMIT = process.argv[2] === 'default' ? undefined : process.argv[2];
const TIME_LIMIT = process.argv[3] ?? '20m';
const STALE_BY_WRITES = 300;
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
  infoRate: Number(process.env.INFO_RATE ?? 0.05),
});
const history = [...ops];
// One ok read late in the history returns a value written (by an acknowledged write) 300 or more
// writes before: not linearizable, and since the value was written, no single op rules it out;
// the search must rule out every order of the ops around it, the case whose memory grows.
const written = new Set(
  history.flatMap((op) =>
    op.type !== 'ok'
      ? []
      : op.f === 'write'
        ? [op.value as number]
        : op.f === 'cas'
          ? [(op.value as number[])[1]]
          : [],
  ),
);
const reads = history.flatMap((op, i) =>
  op.type === 'ok' && op.f === 'read' && typeof op.value === 'number' && op.value > 2 * STALE_BY_WRITES
    ? [i]
    : [],
);
const stale = reads[Math.floor(reads.length * 0.75)];
let value = (history[stale].value as number) - STALE_BY_WRITES;
while (!written.has(value)) value--;
history[stale] = { ...history[stale], value };
writeFileSync(file, history.map((op) => JSON.stringify(op)).join('\n') + '\n');
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
