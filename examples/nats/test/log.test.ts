import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { GENERIC_CRASH_PATTERNS } from '../../../src/index.js';
import { NATS_CRASH_PATTERNS, parseNatsLog } from '../log.js';

const FIXTURES = join(import.meta.dirname, 'fixtures');
const lines = (file: string): string[] => readFileSync(join(FIXTURES, file), 'utf8').split('\n');
const crashes = (line: string): boolean =>
  [...GENERIC_CRASH_PATTERNS, ...NATS_CRASH_PATTERNS].some((re) => re.test(line));

describe('parseNatsLog', () => {
  it('names meta and stream leaders, routes and Raft events, with their numbers', () => {
    const at = '[25153] 2026/12/01 04:04:09.066468';
    expect(parseNatsLog(`${at} [INF] JetStream cluster new metadata leader: n3/mallory`)).toEqual({
      type: 'meta-leader',
      attrs: { leader: 'n3' },
    });
    expect(parseNatsLog(`${at} [INF] JetStream cluster new stream leader for '$G > KV_mallory'`)).toEqual({
      type: 'stream-leader-self',
      attrs: { stream: 'KV_mallory' },
    });
    expect(
      parseNatsLog(`${at} [WRN] JetStream cluster stream '$G > KV_mallory' has NO quorum, stalled`),
    ).toEqual({ type: 'stream-no-quorum', attrs: { stream: 'KV_mallory' } });
    expect(
      parseNatsLog(`${at} [INF] 10.0.0.2:6222 - rid:11 - Router connection closed: Stale Connection`),
    ).toEqual({ type: 'route-closed', attrs: { reason: 'Stale Connection' } });
    expect(
      parseNatsLog(
        `${at} [DBG] RAFT [fjFyEjc1 - S-R3F-ZWVhe28z] Sending out voteRequest {term:2 lastTerm:1 lastIndex:826 candidate:fjFyEjc1 reply:}`,
      ),
    ).toEqual({
      type: 'raft-vote-request',
      attrs: { term: 2, lastTerm: 1, lastIndex: 826, group: 'stream' },
    });
    expect(parseNatsLog(`${at} [DBG] RAFT [fjFyEjc1 - _meta_] Switching to leader`)).toEqual({
      type: 'raft-role',
      attrs: { role: 'leader', group: 'meta' },
    });
  });

  it('leaves lines it has no rule for, and lines not in the server format, to mining', () => {
    expect(parseNatsLog('[1] 2026/12/01 04:04:09.066468 [INF]   Version:  2.9.10')).toBeUndefined();
    expect(parseNatsLog('JetStream cluster new metadata leader: n3/mallory')).toBeUndefined();
  });

  it('names most of a real node log, and finds no crash in it', () => {
    const log = lines('node.log').filter((l) => l !== '');
    const named = log.filter((l) => parseNatsLog(l) !== undefined);
    expect(named.length).toBeGreaterThan(30);
    expect(log.filter(crashes)).toEqual([]);
  });
});

describe('crash patterns', () => {
  it('match a fatal log line, a Go panic and its goroutine dump, and nothing else', () => {
    const matched = lines('crash.log').filter(crashes);
    expect(matched).toHaveLength(3);
    expect(matched[0]).toContain('[FTL]');
    expect(matched[1]).toMatch(/^panic: /);
    expect(matched[2]).toMatch(/^goroutine 4711 \[running\]:/);
  });
});
