import { SimKvraft } from '../../../src/sim/kvraft.js';
import { runWorkload } from '../../../src/sim/kvraft-workload.js';

/** A 3-node cluster under a faulty client workload for 3 s of virtual time: its digest and history size. */
export async function workloadDigest(seed: number): Promise<{ digest: string; ops: number; oks: number }> {
  const sim = new SimKvraft({ seed, nodes: 3 });
  sim.startAll();
  await sim.waitLeader();
  const history = await runWorkload(sim, {
    durationMs: 3000,
    clients: 3,
    gapMs: 20,
    keys: 3,
    faultEveryMs: 800,
  });
  return {
    digest: sim.world.digest(),
    ops: history.length,
    oks: history.filter((op) => op.result.type === 'ok').length,
  };
}

// Run as a script (`node --import tsx workload-digest.ts SEED`): print the result as JSON.
if (process.argv[1] === import.meta.filename) {
  process.stdout.write(`${JSON.stringify(await workloadDigest(Number(process.argv[2])))}\n`);
}
