/**
 * Speed of a whole simulated campaign (`mallory run --sim`): the real campaign loop — policy,
 * schedules, nemesis, workload, checkers, store, report — over kvraft in the simulated world.
 * Prints virtual seconds per wall second and per CPU second, with the campaign's ops and schedules.
 * `npx tsx bench/sim-campaign.ts [virtual time=10m] [nodes=5] [seed=1] [rate ops/s=100] [contract=C2]`
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { runCampaign } from '../src/campaign/run-campaign.js';
import { parseDurationMs } from '../src/core/clock.js';

const TIME_MS = parseDurationMs(process.argv[2] ?? '10m');
const NODES = Number(process.argv[3] ?? 5);
const SEED = Number(process.argv[4] ?? 1);
const RATE = Number(process.argv[5] ?? 100);
const CONTRACT = (process.argv[6] ?? 'C2') as 'C1' | 'C2' | 'C3';

async function main(): Promise<void> {
  const store = mkdtempSync(join(tmpdir(), 'mallory-sim-campaign-'));
  try {
    const wallStart = performance.now();
    const cpuStart = process.cpuUsage();
    const summary = await runCampaign({
      system: 'kvraft',
      sim: { contract: CONTRACT },
      nodes: NODES,
      seed: SEED,
      rate: RATE,
      timeMs: TIME_MS,
      store,
    });
    const wallS = (performance.now() - wallStart) / 1000;
    const cpu = process.cpuUsage(cpuStart);
    const cpuS = (cpu.user + cpu.system) / 1e6;
    const virtualS = summary.metrics.sim_virtual_s ?? 0;
    console.log(
      `kvraft --sim ${NODES} nodes, seed ${SEED}, rate ${RATE}/s, ${CONTRACT}: ${summary.status}, ` +
        `${summary.schedules} schedules, ops ok ${summary.ops.ok} fail ${summary.ops.fail} info ${summary.ops.info}, ` +
        `${summary.faults} faults, ${summary.bugs.length} bugs`,
    );
    console.log(
      `  ${virtualS.toFixed(1)} virtual s in ${wallS.toFixed(1)} wall s (${cpuS.toFixed(1)} s CPU): ` +
        `${(virtualS / wallS).toFixed(1)}× real time per wall second, ${(virtualS / cpuS).toFixed(1)}× per CPU second`,
    );
  } finally {
    rmSync(store, { recursive: true, force: true });
  }
}

await main();
