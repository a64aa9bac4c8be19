import { describe, expect, it } from 'vitest';

import { nemesisGrudges } from '../../src/campaign/_internals/nemesis-grudges.js';
import type { Op } from '../../src/core/op.js';
import type { ScheduleEntry } from '../../src/nemesis/nemesis.js';

function nemesis(index: number, f: string, value: unknown, error?: string): Op {
  return {
    index,
    time: index * 1000,
    type: 'info',
    process: 'nemesis',
    f,
    value,
    ...(error ? { error } : {}),
  };
}

describe('nemesisGrudges', () => {
  it('gives each fault on links its grudge at the op that names the nodes it acted on, in order', () => {
    const ops: Op[] = [
      nemesis(0, 'start-partition', 'halves'),
      nemesis(1, 'start-partition', ['n1', 'n2', 'n3']),
      { index: 2, time: 2000, type: 'invoke', process: 0, f: 'read', value: ['k', null] },
      nemesis(3, 'kill', 'one'),
      nemesis(4, 'kill', ['n2']),
      nemesis(5, 'start-packet', { target: 'one', lossPct: 20 }),
      nemesis(6, 'start-packet', ['n1', 'n3']),
    ];
    const faults: ScheduleEntry[] = [
      {
        atMs: 0,
        f: 'start-partition',
        value: 'halves',
        nodes: ['n1', 'n2', 'n3'],
        links: [
          ['n2', 'n1'],
          ['n2', 'n3'],
          ['n1', 'n2'],
          ['n3', 'n2'],
        ],
      },
      { atMs: 5, f: 'kill', value: 'one', nodes: ['n2'] },
      {
        atMs: 9,
        f: 'start-packet',
        value: { target: 'one', lossPct: 20 },
        nodes: ['n1', 'n3'],
        links: [
          ['n3', 'n1'],
          ['n3', 'n2'],
        ],
      },
    ];
    expect([...nemesisGrudges(ops, faults)]).toEqual([
      [1, 'n1,n3 | n2'],
      [6, 'from n3 to n1,n2'],
    ]);
  });

  it('gives none to a fault whose op errored or is missing', () => {
    const ops = [
      nemesis(0, 'start-partition', 'halves'),
      nemesis(1, 'start-partition', ['n1', 'n2'], 'boom'),
    ];
    const faults: ScheduleEntry[] = [
      {
        atMs: 0,
        f: 'start-partition',
        value: 'halves',
        nodes: ['n1', 'n2'],
        links: [
          ['n1', 'n2'],
          ['n2', 'n1'],
        ],
      },
    ];
    expect(nemesisGrudges(ops, faults).size).toBe(0);
  });
});
