import { describe, expect, it } from 'vitest';

import { LogEvents, logMessage, templateIdOf } from '../../src/observe/log-events.js';
import { roleOfText, roleOfValue } from '../../src/observe/role.js';

describe('logMessage', () => {
  it('strips timestamps and levels', () => {
    expect(logMessage('2026-11-29T08:19:35.123Z INFO became leader')).toBe('became leader');
    expect(logMessage('[2026-11-29 08:19:35,123] [warn] slow apply')).toBe('slow apply');
    expect(logMessage('2026/11/29 08:19:35.123456 ERROR: lost quorum')).toBe('lost quorum');
    expect(logMessage('12345:M 29 Nov 2026 08:19:35.123 * Ready to accept connections')).toBe(
      'Ready to accept connections',
    );
    expect(logMessage('I1129 08:19:35.123456   12345 raft.go:12] tick')).toBe('tick');
    expect(logMessage('time="x" level=info msg="applied snapshot" index=3')).toBe('applied snapshot');
  });

  it('uses the msg of zap JSON lines', () => {
    const line = JSON.stringify({
      level: 'info',
      ts: '2026-11-29T08:19:35Z',
      caller: 'raft/raft.go:1',
      msg: '7e3 became leader at term 3',
    });
    expect(logMessage(line)).toBe('7e3 became leader at term 3');
    expect(logMessage('{not json}')).toBe('{not json}');
  });
});

describe('LogEvents', () => {
  it('prefers the system parser and mines the rest', () => {
    const logs = new LogEvents({
      parseLog: (line) =>
        line.startsWith('TERM ') ? { type: 'term', attrs: { term: Number(line.slice(5)) } } : undefined,
    });
    expect(logs.toEvent('n1', 'TERM 4', 10)).toEqual({
      ts: 10,
      node: 'n1',
      source: 'log',
      type: 'term',
      attrs: { term: 4 },
    });
    const a = logs.toEvent('n1', '2026-11-29T08:19:35Z INFO applied entry 17', 11);
    const b = logs.toEvent('n2', '2026-11-29T08:19:36Z INFO applied entry 18', 12);
    expect(a?.type).toBe(b?.type);
    expect(a?.source).toBe('log');
    expect(logs.toEvent('n1', '   ', 13)).toBeUndefined();
  });

  it('can ignore unparsed lines', () => {
    const logs = new LogEvents({ parseLog: () => undefined, mineUnparsed: false });
    expect(logs.toEvent('n1', 'hello world', 1)).toBeUndefined();
  });

  it('labels role changes', () => {
    const logs = new LogEvents();
    const e = logs.toEvent('n1', '{"level":"info","msg":"7e3 became leader at term 3"}', 1);
    expect(e?.attrs?.role).toBe('leader');
    expect(roleOfText('raft.node: 7e3 became follower at term 4')).toBe('follower');
    expect(roleOfText('1 became pre-candidate at term 2')).toBe('candidate');
    expect(roleOfText('convertToLeader')).toBe('leader');
    expect(roleOfText('step-down')).toBe('follower');
    expect(roleOfText('become-candidate')).toBe('candidate');
    expect(roleOfText('leader is n2')).toBeUndefined();
    expect(roleOfValue('StateLeader')).toBe('leader');
    expect(roleOfValue(3)).toBeUndefined();
  });
});

describe('LogEvents role types', () => {
  it('appends the role to the type of lines announcing one', () => {
    const logs = new LogEvents();
    const leader = logs.toEvent('n1', 'raft: 7e3a9b1c became leader at term 3', 1);
    const follower = logs.toEvent('n2', 'raft: 5f1e2d3c became follower at term 3', 2);
    expect(leader?.type).toMatch(/^L\d+\/leader$/);
    expect(follower?.type).toMatch(/^L\d+\/follower$/);
  });
});

describe('templateIdOf', () => {
  it('names the mined template of an event type, with or without its role', () => {
    const logs = new LogEvents();
    const leader = logs.toEvent('n1', 'raft: 7e3a9b1c became leader at term 3', 1)!;
    const plain = logs.toEvent('n1', 'wal: segment 00000012 rotated after 4096 entries', 2)!;
    const mined = logs.drain.templates().map((t) => t.id);
    expect(leader.type).not.toBe(templateIdOf(leader.type));
    expect(mined).toContain(templateIdOf(leader.type));
    expect(templateIdOf(plain.type)).toBe(plain.type);
    expect(mined).toContain(templateIdOf(plain.type));
  });
});
