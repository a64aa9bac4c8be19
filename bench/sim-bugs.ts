/**
 * How reliably each kvraft bug switch's fault sequence finds its bug in the simulated world, over
 * many seeds: found with the switch, clean without (the same criteria as test/sim/kvraft-bugs.test.ts),
 * and the wall time per run. A run whose setup did not go as scripted (an expectation of the
 * sequence failed) is counted apart. `npx tsx bench/sim-bugs.ts [seeds=20]`
 */
import {
  ackBeforeCommit,
  ackOverwrittenEntry,
  leaseReadOnReceipt,
  learnerVoteCounted,
  readIndexBeforeTermCommit,
  staleVoteReplyCounted,
  voteResetSameTerm,
  lazyVote,
  powerLossAfterAcks,
  rejoinedRestart,
  snapshotUncommittedConfig,
  splitTxn,
  staleRead,
  voteWithoutLogCheck,
} from '../test/sim/_helpers/kvraft-bug-scenarios.js';

const SEEDS = Number(process.argv[2] ?? 20);

interface Scenario {
  readonly bug: string;
  /** Runs the sequence; true when the bug showed. */
  readonly found: (bugOn: boolean, seed: number) => Promise<boolean>;
}

const SCENARIOS: readonly Scenario[] = [
  {
    bug: 'ack-before-commit',
    found: async (on, seed) => {
      const r = await ackBeforeCommit(on, seed);
      return r.written.type === 'ok' && r.readBack.type === 'ok' && r.readBack.value === null;
    },
  },
  {
    bug: 'stale-read',
    found: async (on, seed) => {
      const r = await staleRead(on, seed);
      return r.type === 'ok' && r.value === 1;
    },
  },
  {
    bug: 'vote-without-log-check',
    found: async (on, seed) => {
      const r = await voteWithoutLogCheck(on, seed);
      return r.staleLed || r.crashed.length > 0 || !(r.readBack.type === 'ok' && r.readBack.value === 1);
    },
  },
  {
    bug: 'lazy-vote',
    found: async (on, seed) => (await lazyVote(on, seed)).violations.length > 0,
  },
  {
    bug: 'snapshot-uncommitted-config',
    found: async (on, seed) =>
      (await snapshotUncommittedConfig(on, seed)).output.includes('ASSERTION FAILED'),
  },
  {
    bug: 'split-txn',
    found: async (on, seed) => (await splitTxn(on, seed)).every((r) => r === null),
  },
  ...(['C1', 'C2', 'C3'] as const).map((contract): Scenario => ({
    bug: `ack-before-fsync (${contract})`,
    found: async (on, seed) => (await powerLossAfterAcks(contract, on, seed)).values.some((v) => v === null),
  })),
  ...(['C1', 'C2', 'C3'] as const).map((contract): Scenario => ({
    bug: `rename-without-dir-fsync (${contract})`,
    found: async (on, seed) =>
      (await powerLossAfterAcks(contract, on, seed, 'rename-without-dir-fsync')).values.some(
        (v) => v === null,
      ),
  })),
  {
    bug: 'rejoined-restart-assert',
    found: async (on, seed) => (await rejoinedRestart(on, seed)).output.includes('ASSERTION FAILED'),
  },
  {
    bug: 'vote-reset-same-term',
    found: async (on, seed) => (await voteResetSameTerm(on, seed)).violations.length > 0,
  },
  {
    bug: 'lease-read-on-receipt',
    found: async (on, seed) => {
      const r = await leaseReadOnReceipt(on, seed);
      return r.type === 'ok' && r.value === 1;
    },
  },
  {
    bug: 'read-index-before-term-commit',
    found: async (on, seed) => {
      const r = await readIndexBeforeTermCommit(on, seed);
      return r.type === 'ok' && r.value === 1;
    },
  },
  {
    bug: 'learner-vote-counted',
    found: async (on, seed) => {
      const r = await learnerVoteCounted(on, seed);
      return r.crashed.length > 0 || !(r.readBack.type === 'ok' && r.readBack.value === 1);
    },
  },
  {
    bug: 'stale-vote-reply-counted',
    found: async (on, seed) => {
      const r = await staleVoteReplyCounted(on, seed);
      return r.crashed.length > 0 || !(r.readBack?.type === 'ok' && r.readBack.value === 1);
    },
  },
  {
    bug: 'ack-overwritten-entry',
    found: async (on, seed) => {
      const r = await ackOverwrittenEntry(on, seed);
      return r.written.type === 'ok' && !(r.readBack.type === 'ok' && r.readBack.value === 1);
    },
  },
];

async function tally(scenario: Scenario, on: boolean) {
  let found = 0;
  let setupFailed = 0;
  const started = performance.now();
  for (let seed = 1; seed <= SEEDS; seed++) {
    try {
      if (await scenario.found(on, seed)) found++;
    } catch {
      setupFailed++;
    }
  }
  return { found, setupFailed, msPerRun: (performance.now() - started) / SEEDS };
}

console.log(`kvraft bug sequences in the simulated world, seeds 1..${SEEDS}`);
for (const scenario of SCENARIOS) {
  const on = await tally(scenario, true);
  const off = await tally(scenario, false);
  const setup = on.setupFailed + off.setupFailed;
  console.log(
    `${scenario.bug.padEnd(30)} on: found ${on.found}/${SEEDS}  off: clean ${SEEDS - off.found - off.setupFailed}/${SEEDS}` +
      `  ${((on.msPerRun + off.msPerRun) / 2).toFixed(0)} ms/run` +
      (setup > 0 ? `  (sequence did not go as scripted: ${on.setupFailed} on, ${off.setupFailed} off)` : ''),
  );
}
