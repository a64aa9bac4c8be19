/**
 * Fuzzer memory over a long campaign: runs `mallory run` on kvraft (all fault families) and samples
 * the fuzzer process's resident set (VmRSS from /proc) every second. Prints the mean, median, 99th
 * percentile and peak RSS, the seconds spent over 256 MB, the campaign's own peak (`fuzzer_peak_rss_mb`), and the share of
 * steps whose state arrived before the next decision (`state_arrival_pct`). Needs `npm run build`.
 * `npx tsx bench/memory.ts [budget=30m] [policy=adaptive] [seed=1]`
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const REPO = resolve(import.meta.dirname, '..');
const BIN = join(REPO, 'bin', 'mallory.js');
const BUDGET = process.argv[2] ?? '30m';
const POLICY = process.argv[3] ?? 'adaptive';
const SEED = process.argv[4] ?? '1';
const LIMIT_MB = 256;
const SAMPLE_MS = 1000;

function rssMb(pid: number): number | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = /^VmRSS:\s+(\d+) kB/m.exec(status)?.[1];
    return kb === undefined ? undefined : Number(kb) / 1024;
  } catch {
    return undefined;
  }
}

function quantile(sorted: readonly number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

const store = mkdtempSync(join(tmpdir(), 'mallory-bench-memory-'));
const child = spawn(
  process.execPath,
  [BIN, 'run', '--time', BUDGET, '--policy', POLICY, '--seed', SEED, '--store', store, '--json'],
  { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] },
);
let stdout = '';
child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
child.stderr.resume();
const samples: number[] = [];
const timer = setInterval(() => {
  const mb = rssMb(child.pid!);
  if (mb !== undefined) samples.push(mb);
}, SAMPLE_MS);
const forward = (): void => {
  child.kill('SIGINT');
};
process.once('SIGINT', forward);

child.once('exit', (code) => {
  clearInterval(timer);
  process.off('SIGINT', forward);
  rmSync(store, { recursive: true, force: true });
  const sorted = [...samples].sort((a, b) => a - b);
  const mean = samples.reduce((s, x) => s + x, 0) / Math.max(1, samples.length);
  const f = (x: number): string => x.toFixed(0);
  console.log(
    `kvraft, policy ${POLICY}, seed ${SEED}, budget ${BUDGET}: ${samples.length} samples (1/s), exit ${code}`,
  );
  if (samples.length > 0) {
    console.log(
      `fuzzer RSS MB: mean ${f(mean)}, median ${f(quantile(sorted, 0.5))}, p99 ${f(quantile(sorted, 0.99))}, ` +
        `peak ${f(sorted.at(-1)!)}; seconds over ${LIMIT_MB} MB: ${samples.filter((x) => x > LIMIT_MB).length}`,
    );
  }
  try {
    const summary = JSON.parse(stdout) as { metrics: Record<string, number>; schedules: number };
    console.log(
      `campaign: ${summary.schedules} schedules, fuzzer_peak_rss_mb ${summary.metrics.fuzzer_peak_rss_mb}, ` +
        `state_arrival_pct ${summary.metrics.state_arrival_pct}`,
    );
  } catch {
    console.log('no summary from the campaign (see its exit code)');
  }
});
