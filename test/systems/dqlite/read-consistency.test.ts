/**
 * dqlite's reads are not linearizable, as its consistency model says: a leader cut off from a
 * majority that has not stepped down yet answers reads from its own state. The register checker
 * takes that (reads checked as sequential) and still finds a lost write.
 */
import { describe, expect, it } from 'vitest';

import { linearizabilityChecker } from '../../../src/campaign/checkers.js';
import type { ScheduleCheckInput } from '../../../src/campaign/checker.js';
import type { Op } from '../../../src/core/op.js';
import { dqlite, dqliteApp } from '../../../src/systems/dqlite/dqlite.js';
import type { SystemAdapter } from '../../../src/systems/system.js';

const TIME_LIMIT_MS = 10_000;

type Row = readonly [type: Op['type'], process: number, node: string, f: string, value: unknown];

function ops(rows: readonly Row[]): Op[] {
  return rows.map(([type, process, node, f, value], i) => ({
    index: i,
    time: i * 1e6,
    type,
    process,
    node,
    f,
    value,
  }));
}

function input(history: Op[], system: SystemAdapter): ScheduleCheckInput {
  return { schedule: 0, ops: history, faults: [], events: [], runDir: '/nowhere', system, nodeCount: 5 };
}

/**
 * What dqlite seed 3 recorded (one key of it): n4, the leader, isolated and paused with the rest;
 * once all resumed, n5 led and took a write, and n4, not stepped down yet, still read the old value.
 */
const DEPOSED_LEADER_READ = ops([
  ['invoke', 0, 'n4', 'write', ['k', 1]],
  ['ok', 0, 'n4', 'write', ['k', 1]],
  ['invoke', 1, 'n5', 'write', ['k', 2]],
  ['ok', 1, 'n5', 'write', ['k', 2]],
  ['invoke', 2, 'n4', 'read', ['k', null]],
  ['ok', 2, 'n4', 'read', ['k', 1]],
]);

/** The writer itself reads the value its acknowledged write replaced: that write was lost. */
const LOST_WRITE = ops([
  ['invoke', 0, 'n4', 'write', ['k', 1]],
  ['ok', 0, 'n4', 'write', ['k', 1]],
  ['invoke', 1, 'n5', 'write', ['k', 2]],
  ['ok', 1, 'n5', 'write', ['k', 2]],
  ['invoke', 1, 'n5', 'read', ['k', null]],
  ['ok', 1, 'n5', 'read', ['k', 1]],
]);

describe.each([dqlite, dqliteApp])('$name reads', (definition) => {
  const adapter = definition.create({ bugs: [] });

  it('declares them sequential, as dqlite documents', () => {
    expect(adapter.readConsistency).toBe('sequential');
  });

  it("a deposed leader's stale read is no finding; the same history is not linearizable", async () => {
    expect(await linearizabilityChecker(TIME_LIMIT_MS).check(input(DEPOSED_LEADER_READ, adapter))).toEqual(
      [],
    );
    const strict = { name: 'strict' } as SystemAdapter;
    const [finding] = await linearizabilityChecker(TIME_LIMIT_MS).check(input(DEPOSED_LEADER_READ, strict));
    expect(finding).toMatchObject({ kind: 'linearizability', name: 'not-linearizable' });
  });

  it('a lost acknowledged write is still found', async () => {
    const [finding] = await linearizabilityChecker(TIME_LIMIT_MS).check(input(LOST_WRITE, adapter));
    expect(finding).toMatchObject({ kind: 'linearizability', name: 'not-linearizable' });
    expect(finding.message).toContain('(reads checked as sequential, as the system declares)');
  });
});
