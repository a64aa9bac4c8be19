/**
 * The simulator's control: clean kvraft (no bug switch) under every fault family it takes, in many
 * simulated schedules, must give no finding. Runs `mallory run --sim --system kvraft --faults
 * partition,kill,pause,packet,member,clock,disk --seed S --time T` for seeds 1 … N (one process
 * each, one at a time) and prints per campaign its schedules and findings, then the totals: the
 * schedules run, the findings (each named, with the command that replays it), the virtual and wall
 * seconds. Stops early once `schedules` schedules have run.
 *
 * `npx tsx bench/sim-control.ts [seeds=100] [time=5m] [contract=C2] [schedules=1000]` (build first:
 * `npm run build`; run it under `nice -n 19`)
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

import { FAULT_FAMILIES } from '../src/core/fault.js';

const [seedArg, timeArg, contractArg, schedulesArg] = process.argv.slice(2);
const SEEDS = Number(seedArg ?? 100);
const TIME = timeArg ?? '5m';
const CONTRACT = contractArg ?? 'C2';
const MOST_SCHEDULES = Number(schedulesArg ?? 1000);
const BIN = path.resolve(import.meta.dirname, '..', 'bin', 'mallory.js');
const MS_PER_S = 1000;

interface Summary {
  readonly status: string;
  readonly schedules: number;
  readonly runDir: string;
  readonly bugs: readonly { readonly kind: string; readonly name: string; readonly dir: string }[];
  readonly metrics: Readonly<Record<string, number>>;
}

let schedules = 0;
let campaigns = 0;
let virtualS = 0;
let wallS = 0;
const findings: string[] = [];
const failures: string[] = [];
const store = mkdtempSync(path.join(tmpdir(), 'mallory-sim-control-'));
const started = Date.now();
try {
  for (let seed = 1; seed <= SEEDS && schedules < MOST_SCHEDULES; seed++) {
    const args = [BIN, 'run', '--sim', '--sim-contract', CONTRACT, '--system', 'kvraft'];
    args.push('--faults', FAULT_FAMILIES.join(','), '--seed', String(seed), '--time', TIME);
    args.push('--store', store, '--json');
    const r = spawnSync(process.execPath, args, { encoding: 'utf8', maxBuffer: 1 << 28 });
    let summary: Summary;
    try {
      summary = JSON.parse(r.stdout) as Summary;
    } catch {
      failures.push(`seed ${seed}: exit ${r.status}: ${r.stderr.trim().split('\n').at(-1) ?? ''}`);
      continue;
    }
    campaigns++;
    schedules += summary.schedules;
    virtualS += summary.metrics.sim_virtual_s ?? 0;
    wallS += summary.metrics.sim_wall_s ?? 0;
    for (const b of summary.bugs) findings.push(`seed ${seed}: ${b.kind}/${b.name}: mallory replay ${b.dir}`);
    if (summary.status !== 'complete') failures.push(`seed ${seed}: status ${summary.status}`);
    process.stderr.write(
      `seed ${seed}: ${summary.schedules} schedules, ${summary.bugs.length} findings (${schedules} schedules so far)\n`,
    );
    // Findings keep their run (to replay); a clean run's dir goes.
    if (summary.bugs.length === 0) rmSync(summary.runDir, { recursive: true, force: true });
  }
} finally {
  if (findings.length === 0) rmSync(store, { recursive: true, force: true });
}
console.log(
  `clean kvraft in the simulator (disks ${CONTRACT}, faults ${FAULT_FAMILIES.join(',')}, ${TIME} campaigns):`,
);
console.log(`  ${campaigns} campaigns, ${schedules} schedules, ${findings.length} findings`);
console.log(
  `  ${virtualS.toFixed(0)} virtual s in ${wallS.toFixed(0)} wall s of campaigns (${((Date.now() - started) / MS_PER_S).toFixed(0)} s in all)`,
);
for (const f of findings) console.log(`  finding: ${f}`);
for (const f of failures) console.log(`  not run to its end: ${f}`);
