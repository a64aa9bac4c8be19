/**
 * Speed of the simulated world: a 5-node kvraft cluster (the production node, in one process, on
 * virtual time) under a client workload, with and without random faults. Prints virtual seconds
 * per wall second, events per wall second, operations and the CPU time used.
 * `npx tsx bench/sim-speed.ts [virtual seconds=30] [clients=5] [gap ms=10]`
 */
import { runWorkload } from '../src/sim/kvraft-workload.js';
import { SimKvraft } from '../src/sim/kvraft.js';

const VIRTUAL_S = Number(process.argv[2] ?? 30);
const CLIENTS = Number(process.argv[3] ?? 5);
const GAP_MS = Number(process.argv[4] ?? 10);
const NODES = 5;
const SEED = 1;

async function once(faultEveryMs: number): Promise<void> {
  const sim = new SimKvraft({ seed: SEED, nodes: NODES });
  const wallStart = performance.now();
  const cpuStart = process.cpuUsage();
  sim.startAll();
  await sim.waitLeader();
  const virtualStart = sim.world.nowMs;
  const eventsStart = sim.world.scheduler.executed;
  const history = await runWorkload(sim, {
    durationMs: VIRTUAL_S * 1000,
    clients: CLIENTS,
    gapMs: GAP_MS,
    keys: 5,
    faultEveryMs,
  });
  const wallS = (performance.now() - wallStart) / 1000;
  const cpu = process.cpuUsage(cpuStart);
  const cpuS = (cpu.user + cpu.system) / 1e6;
  const virtualS = (sim.world.nowMs - virtualStart) / 1000;
  const events = sim.world.scheduler.executed - eventsStart;
  const oks = history.filter((op) => op.result.type === 'ok').length;
  console.log(
    [
      `faults ${faultEveryMs > 0 ? `every ${faultEveryMs / 1000} s` : 'none'}:`.padEnd(18),
      `${virtualS.toFixed(1)} virtual s in ${wallS.toFixed(2)} wall s (${cpuS.toFixed(2)} s CPU)`,
      `= ${(virtualS / wallS).toFixed(1)}× real time (${(virtualS / cpuS).toFixed(1)}× per CPU s);`,
      `${events} events, ${Math.round(events / wallS)} events/s;`,
      `${history.length} ops (${oks} ok), ${sim.world.events.length} probe events`,
    ].join(' '),
  );
}

console.log(`sim-speed: ${NODES} kvraft nodes, ${CLIENTS} clients, gap ≤ ${GAP_MS} ms, seed ${SEED}`);
await once(0);
await once(3000);
