import { describe, expect, it } from 'vitest';

import { downLimit, keepTargets } from '../../src/nemesis/target-limits.js';

describe('keepTargets', () => {
  it('keeps the injecting kinds to the chosen targets and leaves the undoing kind whole', () => {
    const values = {
      kill: ['one', 'minority', 'majority', 'all', 'leader'] as const,
      start: ['all'] as const,
    };
    expect(keepTargets('kill', values, { kill: ['one', 'minority'] })).toEqual({
      kill: ['one', 'minority'],
      start: ['all'],
    });
    expect(keepTargets('kill', values, { pause: ['one'] })).toBe(values);
  });

  it('reads the target of parameter objects and partition shapes', () => {
    const packets = [
      { target: 'one' as const, delayMs: 100 },
      { target: 'all' as const, lossPct: 20 },
    ];
    expect(
      keepTargets('packet', { 'start-packet': packets, 'stop-packet': [null] }, { packet: ['one'] }),
    ).toEqual({ 'start-packet': [packets[0]], 'stop-packet': [null] });
    expect(
      keepTargets(
        'partition',
        { 'start-partition': ['halves', 'isolate', 'leader'], 'stop-partition': [null] },
        { partition: ['isolate'] },
      ),
    ).toEqual({ 'start-partition': ['isolate'], 'stop-partition': [null] });
  });
});

describe('keepTargets with packet effects', () => {
  const packets = [
    { target: 'one' as const, delayMs: 200 },
    { target: 'one' as const, lossPct: 20 },
    { target: 'minority' as const, lossPct: 5 },
    { target: 'all' as const, lossPct: 5, delayMs: 50 },
    { target: 'all' as const, dupPct: 10 },
  ];
  const values = { 'start-packet': packets, 'stop-packet': [null] };

  it('packet:loss keeps the values that only lose packets, at every target', () => {
    expect(keepTargets('packet', values, { packet: ['loss'] })).toEqual({
      'start-packet': [packets[1], packets[2]],
      'stop-packet': [null],
    });
  });

  it('effects and targets together keep what matches both', () => {
    expect(keepTargets('packet', values, { packet: ['loss', 'one'] })['start-packet']).toEqual([packets[1]]);
    expect(keepTargets('packet', values, { packet: ['loss', 'delay'] })['start-packet']).toEqual([
      packets[0],
      packets[1],
      packets[2],
      packets[3],
    ]);
    expect(keepTargets('packet', values, { packet: ['dup'] })['start-packet']).toEqual([packets[4]]);
  });
});

describe('downLimit', () => {
  it('is the largest of the kept targets in nodes, none when the family is not kept', () => {
    expect(downLimit('kill', { kill: ['one'] }, 5)).toBe(1);
    expect(downLimit('kill', { kill: ['one', 'minority'] }, 5)).toBe(2);
    expect(downLimit('kill', { kill: ['majority'] }, 5)).toBe(3);
    expect(downLimit('kill', { kill: ['leader'] }, 3)).toBe(1);
    expect(downLimit('kill', { kill: ['all'] }, 3)).toBe(3);
    expect(downLimit('kill', {}, 3)).toBeUndefined();
  });
});
