import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import { createProbe } from '../../../../src/probe/index.js';
import type { Entry, Outgoing } from '../../../../src/systems/kvraft/_internals/messages.js';
import { RaftNode } from '../../../../src/systems/kvraft/_internals/raft.js';
import { nodeDiskFs, nodeEnv } from '../../../../src/systems/kvraft/_internals/node-seams.js';
import { Storage } from '../../../../src/systems/kvraft/_internals/storage.js';

const REAL_IO = { fs: nodeDiskFs, timers: nodeEnv };

const dirs: string[] = [];
const nodes: RaftNode[] = [];
afterEach(() => {
  for (const n of nodes.splice(0)) n.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** n1, started as a joiner on a data dir holding `entries` at term 4, and what it sends. */
function joiner(entries: readonly Entry[]): { raft: RaftNode; sent: { to: string; message: Outgoing }[] } {
  const dir = mkdtempSync(join(tmpdir(), 'mallory-kvraft-raft-'));
  dirs.push(dir);
  const storage = new Storage(REAL_IO, join(dir, 'data'));
  storage.saveMeta({ term: 4, votedFor: null });
  if (entries.length > 0) storage.append(entries);
  const sent: { to: string; message: Outgoing }[] = [];
  const raft = new RaftNode(
    {
      id: 'n1',
      members: ['n1', 'n2', 'n3'],
      join: true,
      bugs: new Set(),
      snapshotEvery: 1000,
      snapshotTrailing: 10,
      heartbeatMs: 50,
      // No election of its own during the test.
      electionMinMs: 60_000,
      electionMaxMs: 60_000,
      requestTimeoutMs: 1000,
      lazyVoteDelayMs: 1500,
    },
    storage,
    createProbe(join(dir, 'probe.jsonl')),
    (to, message) => sent.push({ to, message }),
    nodeEnv,
  );
  nodes.push(raft);
  return { raft, sent };
}

function askVote(raft: RaftNode, from: string, lastLogIndex: number): void {
  raft.receive({
    kind: 'request-vote',
    from,
    to: 'n1',
    msg: `${from}-1`,
    term: 5,
    lastLogIndex,
    lastLogTerm: 4,
  });
}

describe('kvraft votes and membership', () => {
  it('a learner votes: it may have been promoted in a configuration it has not received (found by a campaign)', () => {
    // n1 was re-added as a learner ({n2, n3} + learner n1) and killed before the entry promoting it
    // reached it; n2's latest configuration counts n1 as a voter and needs its vote.
    const { raft, sent } = joiner([
      { index: 1, term: 4, command: { type: 'config', members: ['n2', 'n3'], learners: ['n1'] } },
    ]);
    askVote(raft, 'n2', 2);
    expect(sent).toEqual([{ to: 'n2', message: { kind: 'request-vote-reply', term: 5, granted: true } }]);
  });

  it('a wiped node started to join, in no configuration yet, does not vote', () => {
    const { raft, sent } = joiner([]);
    askVote(raft, 'n2', 2);
    expect(sent).toEqual([{ to: 'n2', message: { kind: 'request-vote-reply', term: 5, granted: false } }]);
  });
});
