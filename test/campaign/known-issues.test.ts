import { describe, expect, it } from 'vitest';

import type { Finding } from '../../src/campaign/checker.js';
import { markKnownCrashes, markKnownNoRecovery } from '../../src/campaign/known-issues.js';
import { REDIS_AOF_TAIL_ISSUE } from '../../src/systems/redis/redis.js';
import {
  GO_DQLITE_LEGACY_LEADER_ISSUE,
  RAFT_MEMBERSHIP_ROLLBACK_ISSUE,
} from '../../src/systems/dqlite/dqlite.js';
import type { ScheduleEntry } from '../../src/nemesis/nemesis.js';

// The lines a redis negative control (seed 4, every family) quoted for n3 after a torn write.
const BAD_AOF =
  '10067:S 07 Dec 2026 13:03:17.347 # Bad file format reading the append only file appendonly.aof.10.incr.aof: make a backup of your AOF file, then use ./redis-check-aof --fix <filename.manifest>';
const exit = (node: string, lines: string[]): Finding => ({
  kind: 'crash',
  name: 'unexpected-exit',
  message: `${node} exited by itself (code 1)`,
  evidence: { node, kind: 'unexpected-exit', message: `${node} exited by itself (code 1)`, lines },
});
const torn: Pick<ScheduleEntry, 'f' | 'nodes'>[] = [{ f: 'torn-write', nodes: ['n1', 'n2', 'n3'] }];
const noRecovery = (reads: Record<string, 'ok' | 'fail'>): Finding => ({
  kind: 'recovery',
  name: 'no-recovery',
  message: 'the system did not serve again within 67.5 s',
  evidence: {
    nodes: Object.entries(reads).map(([node, type]) => ({ node, read: { type } })),
  },
});

describe('known issues a system declares', () => {
  it('a crash whose line the issue names, after a fault it names on that node, is a note naming the issue', () => {
    const { findings, known } = markKnownCrashes(
      [exit('n3', ['starting', BAD_AOF])],
      [REDIS_AOF_TAIL_ISSUE],
      torn,
    );
    expect(findings[0]).toMatchObject({ kind: 'crash', severity: 'note' });
    expect(findings[0].message).toMatch(
      /^a known issue of the system \(redis\/redis#5177, https:\/\/github\.com\/redis\/redis\/issues\/5177\): Redis 7 will not load .*: n3 exited by itself \(code 1\)$/,
    );
    expect(known).toEqual([{ issue: REDIS_AOF_TAIL_ISSUE, node: 'n3' }]);
  });

  it('another line, no such fault, or the fault on another node keeps it a finding', () => {
    const cases: [Finding, Pick<ScheduleEntry, 'f' | 'nodes'>[]][] = [
      [exit('n3', ['Segmentation fault']), torn],
      [exit('n3', [BAD_AOF]), [{ f: 'kill', nodes: ['n3'] }]],
      [exit('n3', [BAD_AOF]), [{ f: 'torn-write', nodes: ['n1'] }]],
      [exit('n3', []), torn],
    ];
    for (const [finding, faults] of cases) {
      const { findings, known } = markKnownCrashes([finding], [REDIS_AOF_TAIL_ISSUE], faults);
      expect(findings[0].severity).toBeUndefined();
      expect(known).toEqual([]);
    }
    expect(markKnownCrashes([exit('n3', [BAD_AOF])], [], torn).findings[0].severity).toBeUndefined();
  });

  it('the no-recovery whose only silent nodes crashed so is that issue too; any other silent node keeps it a finding', () => {
    const { known } = markKnownCrashes([exit('n3', [BAD_AOF])], [REDIS_AOF_TAIL_ISSUE], torn);
    const explained = markKnownNoRecovery(noRecovery({ n1: 'ok', n2: 'ok', n3: 'fail' }), known);
    expect(explained).toMatchObject({ severity: 'note' });
    expect(explained.message).toContain('(redis/redis#5177');
    expect(
      markKnownNoRecovery(noRecovery({ n1: 'ok', n2: 'fail', n3: 'fail' }), known).severity,
    ).toBeUndefined();
    expect(markKnownNoRecovery(noRecovery({ n1: 'ok', n2: 'ok', n3: 'fail' }), []).severity).toBeUndefined();
  });

  it("go-dqlite's legacy-leader panic, as a dqlite-app control quoted it after a packet delay, is that issue", () => {
    // n4's last lines (dqlite-app negative control, seed 3, schedule 11).
    const lines = [
      '2026/12/07 23:40:57 10.26.133.4:8001: DEBUG: leadership lost (10250 - not leader)',
      'panic: short message: type=1 words=1 off=8',
    ];
    const crashOf = (quoted: string[]): Finding => ({
      kind: 'crash',
      name: 'crash-text',
      message: `n4 stderr.log: ${quoted[quoted.length - 1]}`,
      evidence: { node: 'n4', kind: 'crash-text', message: 'panic', lines: quoted },
    });
    const crash = crashOf(lines);
    const delayed: Pick<ScheduleEntry, 'f' | 'nodes'>[] = [{ f: 'start-packet', nodes: ['n2', 'n4'] }];
    const { findings, known } = markKnownCrashes([crash], [GO_DQLITE_LEGACY_LEADER_ISSUE], delayed);
    expect(findings[0]).toMatchObject({ severity: 'note' });
    expect(findings[0].message).toContain('canonical/go-dqlite#287');
    expect(known).toEqual([{ issue: GO_DQLITE_LEGACY_LEADER_ISSUE, node: 'n4' }]);
    // Another panic stays a finding.
    const other = crashOf(['panic: runtime error: index out of range']);
    expect(
      markKnownCrashes([other], [GO_DQLITE_LEGACY_LEADER_ISSUE], delayed).findings[0].severity,
    ).toBeUndefined();
  });

  it("libraft's rollback SIGSEGV, as a dqlite-app control quoted n4's last lines, is that issue", () => {
    const lines = [
      'LIBRAFT   1796688762973306768 src/replication.c:997 log mismatch -> truncate (9254)',
      'LIBRAFT   1796688762973316733 src/membership.c:153 roll back membership',
    ];
    const removed: Pick<ScheduleEntry, 'f' | 'nodes'>[] = [{ f: 'member-remove', nodes: ['n4'] }];
    const segv: Finding = {
      kind: 'crash',
      name: 'unexpected-exit',
      message: 'n4 exited by itself (signal SIGSEGV)',
      evidence: {
        node: 'n4',
        kind: 'unexpected-exit',
        message: 'n4 exited by itself (signal SIGSEGV)',
        lines,
      },
    };
    const { findings } = markKnownCrashes([segv], [RAFT_MEMBERSHIP_ROLLBACK_ISSUE], removed);
    expect(findings[0]).toMatchObject({ severity: 'note' });
    expect(findings[0].message).toContain('canonical/raft#250');
    // A crash whose last lines are elsewhere stays a finding.
    const elsewhere = {
      ...segv,
      evidence: { node: 'n4', kind: 'unexpected-exit', message: 'x', lines: [lines[0]] },
    };
    expect(
      markKnownCrashes([elsewhere], [RAFT_MEMBERSHIP_ROLLBACK_ISSUE], removed).findings[0].severity,
    ).toBeUndefined();
  });
});
