import { describe, expect, it } from 'vitest';

import type { FaultWindow } from '../../src/report/fault-windows.js';
import { lineTimeMs, roleChangeOfLine, roleSpans } from '../../src/report/role-spans.js';

const START = Date.parse('2026-11-30T21:00:00.000Z');

describe('roleChangeOfLine', () => {
  it('reads the role and the wall-clock time a log line announces', () => {
    expect(roleChangeOfLine('n1', '2026-11-30T21:00:01.500Z n1 become-leader term=2', START)).toEqual({
      node: 'n1',
      atMs: 1500,
      role: 'leader',
    });
    expect(
      roleChangeOfLine(
        'n2',
        '{"level":"info","ts":"2026-11-30T21:00:02.000+0000","msg":"2 became follower at term 3"}',
        START,
      ),
    ).toEqual({ node: 'n2', atMs: 2000, role: 'follower' });
    expect(
      roleChangeOfLine(
        'n3',
        '{"ts":"2026-11-30T21:00:03.000Z","msg":"raft.node: f7 elected leader 21 at term 2"}',
        START,
      ),
    ).toEqual({ node: 'n3', atMs: 3000, role: 'follower' });
    expect(
      roleChangeOfLine('n3', '2026-11-30T21:00:03.000Z raft.node: 21 elected leader 21 at term 2', START)
        ?.role,
    ).toBe('leader');
    expect(roleChangeOfLine('n1', 'n1 become-leader term=2', START)).toBeUndefined();
    expect(roleChangeOfLine('n1', '2026-11-30T21:00:01.500Z n1 commit-advance', START)).toBeUndefined();
  });

  it('parses ISO times with a space, an offset or none', () => {
    expect(lineTimeMs('x 2026-11-30 21:00:00.250Z y')).toBe(START + 250);
    expect(lineTimeMs('2026-11-30T23:00:00+02:00')).toBe(START);
    expect(lineTimeMs('no time here')).toBeUndefined();
  });
});

describe('roleSpans', () => {
  it('holds a role until the next one, ends it when the node is killed, and merges repeats', () => {
    const kill: FaultWindow = {
      node: 'n1',
      family: 'kill',
      f: 'kill',
      fromMs: 5000,
      toMs: 6000,
      endedBy: 'stop',
    };
    const spans = roleSpans(
      [
        { node: 'n1', atMs: 1000, role: 'candidate' },
        { node: 'n1', atMs: 1200, role: 'leader' },
        { node: 'n1', atMs: 3000, role: 'leader' },
        { node: 'n1', atMs: 7000, role: 'follower' },
        { node: 'n2', atMs: 1100, role: 'follower' },
      ],
      [kill],
      10_000,
    );
    expect(spans).toEqual([
      { node: 'n1', role: 'candidate', fromMs: 1000, toMs: 1200 },
      { node: 'n1', role: 'leader', fromMs: 1200, toMs: 5000 },
      { node: 'n1', role: 'follower', fromMs: 7000, toMs: 10_000 },
      { node: 'n2', role: 'follower', fromMs: 1100, toMs: 10_000 },
    ]);
  });
});
