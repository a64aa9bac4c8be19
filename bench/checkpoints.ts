// What checkpoints cost each built-in system: a short campaign per system (random policy, the
// default faults), and from its summary the pause of the nodes per copy and the bytes per
// schedule. Run: npx tsx bench/checkpoints.ts [time=60s] [systems=kvraft,etcd,redis,dqlite]
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const REPO = resolve(import.meta.dirname, '..');
const BIN = join(REPO, 'bin', 'mallory.js');
const TIME = process.argv[2] ?? '60s';
const SYSTEMS = (process.argv[3] ?? 'kvraft,etcd,redis,dqlite').split(',');

interface Summary {
  readonly status: string;
  readonly schedules: number;
  readonly checkpoints?: {
    readonly taken: number;
    readonly kept: readonly { readonly pauseMs: number; readonly bytes: number }[];
    readonly bytes: number;
    readonly pauseMsMedian: number | null;
    readonly pauseMsMax: number | null;
    readonly bytesPerSchedule: number | null;
  };
}

const mib = (bytes: number | null | undefined): string =>
  bytes === null || bytes === undefined ? '-' : (bytes / 1024 ** 2).toFixed(2);

console.log(`checkpoint cost per schedule, one ${TIME} campaign per system (--policy random --seed 1)`);
console.log('system   schedules  taken  pause ms (median / max)  MiB per schedule  MiB kept');
for (const system of SYSTEMS) {
  const store = mkdtempSync(join(tmpdir(), 'mallory-checkpoint-bench-'));
  try {
    const args = [BIN, 'run', '--system', system, '--time', TIME, '--policy', 'random', '--seed', '1'];
    args.push('--store', store, '--json');
    const r = spawnSync(process.execPath, args, {
      cwd: REPO,
      encoding: 'utf8',
      timeout: 30 * 60_000,
      env: { ...process.env, MALLORY_STATE_DIR: join(store, 'state') },
    });
    let s: Summary;
    try {
      s = JSON.parse(r.stdout) as Summary;
    } catch {
      console.log(`${system.padEnd(8)} gave no summary: ${r.stderr.trim().split('\n').at(-1) ?? ''}`);
      continue;
    }
    const c = s.checkpoints;
    console.log(
      `${system.padEnd(8)} ${String(s.schedules).padStart(9)}  ${String(c?.taken ?? 0).padStart(5)}  ` +
        `${`${c?.pauseMsMedian ?? '-'} / ${c?.pauseMsMax ?? '-'}`.padStart(23)}  ` +
        `${mib(c?.bytesPerSchedule).padStart(16)}  ${mib(c?.bytes).padStart(8)}`,
    );
  } finally {
    rmSync(store, { recursive: true, force: true });
  }
}
