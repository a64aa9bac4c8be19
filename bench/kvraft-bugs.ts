/**
 * Baseline for bug finding: `mallory run --policy random` against kvraft with each bug switch (and
 * with none, which must find nothing), for several seeds and a fixed budget. Prints, per bug: in how
 * many runs it was found and the time to first detection (median over the runs that found it, min,
 * max). Each run stops at its first bug (`--stop-on-bug`). Needs `npm run build`.
 * `npx tsx bench/kvraft-bugs.ts [budget=120s] [seeds=3] [bug,bug,…|all] [policy=random]`
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

import { KVRAFT_BUGS, kvraftBugArgs, type KvraftBug } from '../src/systems/kvraft/bugs.js';

const REPO = resolve(import.meta.dirname, '..');
const BIN = join(REPO, 'bin', 'mallory.js');
const BUDGET = process.argv[2] ?? '120s';
const SEEDS = Number(process.argv[3] ?? 3);
const ONLY = process.argv[4] && process.argv[4] !== 'all' ? process.argv[4].split(',') : undefined;
const POLICY = process.argv[5] ?? 'random';
const RUN_TIMEOUT_MS = 30 * 60_000;

interface Summary {
  readonly status: string;
  readonly elapsedMs: number;
  readonly bugs: readonly { kind: string; name: string; foundAtMs: number }[];
}

function runOnce(bug: KvraftBug | undefined, seed: number): Summary | undefined {
  const store = mkdtempSync(join(tmpdir(), 'mallory-bench-'));
  try {
    const args = [BIN, 'run', '--time', BUDGET, '--seed', `${seed}`, '--policy', POLICY];
    // Time to the first detection is all we measure: a run ends at its first bug.
    args.push('--store', store, '--json', '--stop-on-bug');
    // What each switch needs (its cluster size, workload, fault families): see KVRAFT_BUG_NEEDS.
    if (bug) args.push(...kvraftBugArgs(bug));
    const r = spawnSync(process.execPath, args, {
      cwd: REPO,
      encoding: 'utf8',
      timeout: RUN_TIMEOUT_MS,
      env: { ...process.env, MALLORY_STATE_DIR: join(store, 'state') },
    });
    try {
      return JSON.parse(r.stdout) as Summary;
    } catch {
      process.stderr.write(`run ${bug ?? 'none'} seed ${seed} gave no summary: ${r.stderr.slice(-500)}\n`);
      return undefined;
    }
  } finally {
    rmSync(store, { recursive: true, force: true });
  }
}

function fmt(ms: number | undefined): string {
  return ms === undefined ? '-' : `${(ms / 1000).toFixed(1)}s`;
}

const bugs: (KvraftBug | undefined)[] = [undefined, ...KVRAFT_BUGS].filter(
  (b) => !ONLY || ONLY.includes(b ?? 'none'),
);
console.log(`kvraft bugs, policy ${POLICY}, budget ${BUDGET}, ${SEEDS} seeds`);
console.log('bug                          found  median   min      max      (first finding kinds)');
for (const bug of bugs) {
  const times: number[] = [];
  const kinds = new Set<string>();
  let runs = 0;
  for (let seed = 1; seed <= SEEDS; seed++) {
    const summary = runOnce(bug, seed);
    if (!summary) continue;
    runs++;
    const first = [...summary.bugs].sort((a, b) => a.foundAtMs - b.foundAtMs)[0];
    if (first) {
      times.push(first.foundAtMs);
      kinds.add(`${first.kind}:${first.name}`);
    }
  }
  times.sort((a, b) => a - b);
  const mid = times.length / 2;
  const median =
    times.length === 0
      ? undefined
      : times.length % 2 === 1
        ? times[Math.floor(mid)]
        : (times[mid - 1] + times[mid]) / 2;
  console.log(
    `${(bug ?? 'none').padEnd(28)} ${`${times.length}/${runs}`.padEnd(6)} ${fmt(median).padEnd(8)} ` +
      `${fmt(times[0]).padEnd(8)} ${fmt(times.at(-1)).padEnd(8)} ${[...kinds].join(' ')}`,
  );
}
