import { describe, expect, it } from 'vitest';

import {
  ackBeforeCommit,
  staleRead,
  voteWithoutLogCheck,
  lazyVote,
  snapshotUncommittedConfig,
  splitTxn,
  rejoinedRestart,
  voteResetSameTerm,
  leaseReadOnReceipt,
  readIndexBeforeTermCommit,
  learnerVoteCounted,
  staleVoteReplyCounted,
  ackOverwrittenEntry,
} from './_helpers/kvraft-bug-scenarios.js';

// Each kvraft bug switch, driven in the simulated world through the fault sequence its real-process
// test (test/systems/kvraft/bugs.test.ts) uses: found with the switch and clean without.
// bench/sim-bugs.ts runs them over many seeds.

const SEED = 7;

describe('kvraft bug switches in the simulated world', () => {
  it('ack-before-commit: an acknowledged write is lost after the leader dies; clean without', async () => {
    expect(await ackBeforeCommit(true, SEED)).toEqual({
      written: { type: 'ok' },
      readBack: { type: 'ok', value: null },
    });
    const clean = await ackBeforeCommit(false, SEED);
    expect(clean.written.type).toBe('info');
    expect(clean.readBack).toEqual({ type: 'ok', value: null });
  });

  it('stale-read: a partitioned leader returns an overwritten value; clean without', async () => {
    expect(await staleRead(true, SEED)).toEqual({ type: 'ok', value: 1 });
    expect((await staleRead(false, SEED)).type).not.toBe('ok');
  });

  it('vote-without-log-check: a stale node leads and overwrites a committed write; clean without', async () => {
    const found = await voteWithoutLogCheck(true, SEED);
    expect(found.staleLed).toBe(true);
    expect(found.crashed.length > 0 || (found.readBack.type === 'ok' && found.readBack.value === null)).toBe(
      true,
    );
    expect(await voteWithoutLogCheck(false, SEED)).toEqual({
      staleLed: false,
      crashed: [],
      readBack: { type: 'ok', value: 1 },
    });
  });

  it('lazy-vote: a restarted voter votes twice in one term and two nodes lead it; clean without', async () => {
    const { term, violations } = await lazyVote(true, SEED);
    const names = violations.map((v) => v.name);
    expect(names).toContain('election-safety');
    expect(names).toContain('vote-once-per-term');
    expect(violations.find((v) => v.name === 'election-safety')!.message).toBe(
      `two leaders in term ${term}: n2 and n1`,
    );
    expect((await lazyVote(false, SEED)).violations).toEqual([]);
  });

  it('snapshot-uncommitted-config: rolling back the configuration crashes the node; clean without', async () => {
    const found = await snapshotUncommittedConfig(true, SEED);
    expect(found.snapshotConfigIndex).toBe(found.configIndex);
    expect(found.exit).toEqual({ code: 1 });
    expect(found.output).toMatch(/ASSERTION FAILED: configuration rollback from index \d+/);
    const clean = await snapshotUncommittedConfig(false, SEED);
    expect(clean.snapshotConfigIndex).toBe(0);
    expect(clean.exit).toBeUndefined();
    expect(clean.rolledBack).toBe(true);
    expect(clean.output).not.toContain('ASSERTION FAILED');
  });

  it('split-txn: two transactions each miss the append of the other; clean without', async () => {
    expect(await splitTxn(true, SEED)).toEqual([null, null]);
    const reads = await splitTxn(false, SEED);
    expect(reads.filter((r) => r === null)).toHaveLength(1);
    expect(reads.filter((r) => Array.isArray(r) && r[0] === 1)).toHaveLength(1);
  });

  it('rejoined-restart-assert: a rejoined node restarted as a joiner fails its assertion; clean without', async () => {
    const found = await rejoinedRestart(true, SEED);
    expect(found.exit).toEqual({ code: 1 });
    expect(found.output).toMatch(/ASSERTION FAILED: n3 restarted as a joiner onto a stored configuration/);
    const clean = await rejoinedRestart(false, SEED);
    expect(clean.exit).toBeUndefined();
    expect(clean.output).not.toContain('ASSERTION FAILED');
  });

  it('vote-reset-same-term: a voter votes again in the term it learned the leader of; clean without', async () => {
    const found = await voteResetSameTerm(true, SEED);
    expect(found.n3Led).toBe(true);
    expect(new Set(found.violations.map((v) => v.message))).toEqual(
      new Set(['n2 voted for n1 and then for n3 in term 1', 'two leaders in term 1: n1 and n3']),
    );
    expect(await voteResetSameTerm(false, SEED)).toEqual({ n3Led: false, violations: [] });
  });

  it('lease-read-on-receipt: a resumed, deposed leader answers from its lease; clean without', async () => {
    expect(await leaseReadOnReceipt(true, SEED)).toEqual({ type: 'ok', value: 1 });
    const clean = await leaseReadOnReceipt(false, SEED);
    expect(clean).not.toEqual({ type: 'ok', value: 1 });
  });

  it('read-index-before-term-commit: a new leader reads below the old commit; clean without', async () => {
    expect(await readIndexBeforeTermCommit(true, SEED)).toEqual({ type: 'ok', value: 1 });
    expect(await readIndexBeforeTermCommit(false, SEED)).toEqual({ type: 'ok', value: 2 });
  });

  it("learner-vote-counted: a learner's vote elects a cut-off voter that overwrites commits; clean without", async () => {
    const found = await learnerVoteCounted(true, SEED);
    expect(found.n3Led).toBe(true);
    expect(found.crashed.length > 0 || !(found.readBack.type === 'ok' && found.readBack.value === 1)).toBe(
      true,
    );
    expect(await learnerVoteCounted(false, SEED)).toEqual({
      n3Led: false,
      crashed: [],
      readBack: { type: 'ok', value: 1 },
    });
  });

  it('stale-vote-reply-counted: a delayed grant elects an empty log that overwrites commits; clean without', async () => {
    const found = await staleVoteReplyCounted(true, SEED);
    expect(found.n1Led).toBe(true);
    expect(found.crashed).toEqual(['n2', 'n3']);
    expect(await staleVoteReplyCounted(false, SEED)).toEqual({
      n1Led: false,
      crashed: [],
      readBack: { type: 'ok', value: 1 },
    });
  });

  it('ack-overwritten-entry: a deposed leader acknowledges a write another entry replaced; clean without', async () => {
    expect(await ackOverwrittenEntry(true, SEED)).toEqual({
      written: { type: 'ok' },
      readBack: { type: 'ok', value: 0 },
    });
    expect(await ackOverwrittenEntry(false, SEED)).toEqual({
      written: { type: 'info', error: 'leadership lost' },
      readBack: { type: 'ok', value: 0 },
    });
  });
});
