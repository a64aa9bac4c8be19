import { describe, expect, it } from 'vitest';

import { parseJsonWithBigIds, readMembers } from '../../../src/systems/etcd/gateway.js';
import { parseEtcdLog } from '../../../src/systems/etcd/log.js';

describe('parseEtcdLog', () => {
  it('reads raft state changes with their term from zap JSON', () => {
    const line =
      '{"level":"info","ts":"2026-11-29T08:28:10.123Z","caller":"raft/raft.go:765","msg":"8e9e05c52164694d became leader at term 3"}';
    expect(parseEtcdLog(line)).toEqual({ type: 'became-leader', attrs: { term: 3 } });
    expect(
      parseEtcdLog(
        '{"level":"info","msg":"8e9e05c52164694d [logterm: 2, index: 17] sent MsgVote request to 91bc3c398fb3c146 at term 3"}',
      ),
    ).toEqual({ type: 'vote-request', attrs: { logterm: 2, index: 17 } });
  });

  it('copies numeric zap fields for snapshots and ignores other lines', () => {
    expect(parseEtcdLog('{"level":"info","msg":"saved snapshot","snapshot-index":2001}')).toEqual({
      type: 'snapshot-saved',
      attrs: { index: 2001 },
    });
    expect(parseEtcdLog('{"level":"info","msg":"something else"}')).toBeUndefined();
    expect(parseEtcdLog('not json')).toBeUndefined();
  });
});

describe('etcd gateway JSON', () => {
  it('keeps uint64 member ids exact', () => {
    const json = parseJsonWithBigIds(
      '{"members":[{"ID":10276657743932975437,"name":"n1","peerURLs":["http://a:2380"]}]}',
    );
    expect(readMembers(json)).toEqual([
      { id: 10276657743932975437n, name: 'n1', peerUrls: ['http://a:2380'] },
    ]);
    expect(readMembers({ members: [{ ID: '10276657743932975437' }] })[0].id).toBe(10276657743932975437n);
  });
});
