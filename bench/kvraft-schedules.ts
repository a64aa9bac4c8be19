/**
 * Reliability of each kvraft bug switch's scripted schedule (`test/systems/kvraft/schedules/`):
 * `mallory run --schedule` N times with the switch on (must find it ≥ 9 in 10) and N times with it
 * off (must find nothing). Prints, per bug, found-on and clean-off counts and what was found.
 * Needs `npm run build`. `npx tsx bench/kvraft-schedules.ts [runs=10] [bug,bug,…|all]`
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

import { KVRAFT_BUG_NEEDS, KVRAFT_BUGS, type KvraftBug } from '../src/systems/kvraft/bugs.js';

const REPO = resolve(import.meta.dirname, '..');
const BIN = join(REPO, 'bin', 'mallory.js');
const SCHEDULES = join(REPO, 'test', 'systems', 'kvraft', 'schedules');
const RUNS = Number(process.argv[2] ?? 10);
const ONLY = process.argv[3] && process.argv[3] !== 'all' ? process.argv[3].split(',') : undefined;
/**
 * The length (steps of 2.5 s) each schedule is written for; its cluster and workload are the
 * switch's needs. A switch without a schedule here is skipped.
 */
const STEPS: Partial<Readonly<Record<KvraftBug, number>>> = {
  'stale-read': 8,
  'ack-before-commit': 6,
  'vote-without-log-check': 9,
  'lazy-vote': 12,
  'snapshot-uncommitted-config': 6,
  'split-txn': 6,
  'ack-before-fsync': 5,
  'rejoined-restart-assert': 4,
  'ack-overwritten-entry': 10,
};
/** A switch whose bug needs the state an earlier schedule leaves runs one schedule per file, in order. */
const FILES: Partial<Readonly<Record<KvraftBug, readonly string[]>>> = {
  'rejoined-restart-assert': ['rejoined-restart-assert.1.jsonl', 'rejoined-restart-assert.2.jsonl'],
};

interface Summary {
  readonly status: string;
  readonly bugs: readonly { kind: string; name: string }[];
}

function runOnce(bug: KvraftBug, on: boolean, seed: number): Summary | undefined {
  const store = mkdtempSync(join(tmpdir(), 'mallory-sched-bench-'));
  const { nodes, workload } = KVRAFT_BUG_NEEDS[bug];
  try {
    const args = [BIN, 'run', '--time', '5m', '--seed', `${seed}`, '--nodes', `${nodes}`];
    args.push('--steps', `${STEPS[bug] ?? 0}`);
    for (const file of FILES[bug] ?? [`${bug}.jsonl`]) args.push('--schedule', join(SCHEDULES, file));
    args.push('--workload', workload, '--store', store, '--json');
    if (on) args.push('--bug', bug);
    const r = spawnSync(process.execPath, args, {
      cwd: REPO,
      encoding: 'utf8',
      timeout: 10 * 60_000,
      env: { ...process.env, MALLORY_STATE_DIR: join(store, 'state') },
    });
    try {
      return JSON.parse(r.stdout) as Summary;
    } catch {
      process.stderr.write(
        `${bug} ${on ? 'on' : 'off'} seed ${seed} gave no summary: ${r.stderr.slice(-500)}\n`,
      );
      return undefined;
    }
  } finally {
    rmSync(store, { recursive: true, force: true });
  }
}

console.log(`kvraft scripted schedules, ${RUNS} runs with the switch on and ${RUNS} off`);
for (const bug of KVRAFT_BUGS.filter((b) => STEPS[b] !== undefined && (!ONLY || ONLY.includes(b)))) {
  const found = new Map<string, number>();
  let hits = 0;
  let clean = 0;
  const offFindings: string[] = [];
  for (let i = 0; i < RUNS; i++) {
    const on = runOnce(bug, true, 1000 + i);
    if (on && on.bugs.length > 0) hits++;
    for (const name of new Set(on?.bugs.map((b) => `${b.kind}/${b.name}`) ?? [])) {
      found.set(name, (found.get(name) ?? 0) + 1);
    }
    const off = runOnce(bug, false, 1000 + i);
    if (off && off.status === 'complete' && off.bugs.length === 0) clean++;
    else offFindings.push(...(off?.bugs.map((b) => `${b.kind}/${b.name}`) ?? [`no summary`]));
    process.stderr.write(
      `${bug} run ${i + 1}/${RUNS}: on ${on?.bugs.length ?? '-'} findings, off ${off?.bugs.length ?? '-'}\n`,
    );
  }
  const what = [...found].map(([n, c]) => `${n} ×${c}`).join(', ');
  console.log(
    `${bug.padEnd(28)} on: found ${hits}/${RUNS}  off: clean ${clean}/${RUNS}   ${what}${offFindings.length > 0 ? `   off found: ${offFindings.join(', ')}` : ''}`,
  );
}
