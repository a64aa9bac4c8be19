import { describe, expect, it } from 'vitest';

import type { Link } from '../../src/cluster/net/backend.js';
import { describeLinks, linkFaultOf } from '../../src/nemesis/grudge.js';

/** Every link between the groups, both ways: what a partition into these groups cuts. */
function between(...groups: string[][]): Link[] {
  const links: Link[] = [];
  for (const g of groups) {
    for (const h of groups) {
      if (g === h) continue;
      for (const a of g) for (const b of h) links.push([a, b]);
    }
  }
  return links;
}

describe('describeLinks: which side is which', () => {
  it('names the sides of a partition, whatever order the nodes came in', () => {
    expect(describeLinks(['n2', 'n1', 'n3'], between(['n2'], ['n1', 'n3']))).toBe('n1,n3 | n2');
    expect(describeLinks(['n5', 'n1'], between(['n1', 'n4'], ['n2', 'n3', 'n5']))).toBe('n1,n4 | n2,n3,n5');
    expect(describeLinks([], between(['n1'], ['n2'], ['n3']))).toBe('n1 | n2 | n3');
  });

  it('names the node a packet fault or a one-way cut is aimed at', () => {
    expect(
      describeLinks(
        ['n1', 'n3', 'n2'],
        [
          ['n3', 'n1'],
          ['n3', 'n2'],
        ],
      ),
    ).toBe('from n3 to n1,n2');
    expect(
      describeLinks(
        ['n1', 'n2', 'n3'],
        [
          ['n1', 'n3'],
          ['n2', 'n3'],
        ],
      ),
    ).toBe('to n3 from n1,n2');
  });

  it('lists the links of anything else (a bridge, a ring), and says nothing without links', () => {
    const bridge: Link[] = [
      ['n1', 'n3'],
      ['n3', 'n1'],
      ['n4', 'n5'],
    ];
    expect(describeLinks(['n1', 'n2', 'n3', 'n4', 'n5'], bridge)).toBe('n1→n3, n3→n1, n4→n5');
    expect(describeLinks(['n1'], [])).toBeUndefined();
    expect(describeLinks(['n1'], undefined)).toBeUndefined();
  });

  it('names the node a bridge leaves in touch with both sides, among the members', () => {
    const bridge: Link[] = [...between(['n1', 'n2'], ['n4', 'n5'])];
    const members = ['n1', 'n2', 'n3', 'n4', 'n5'];
    expect(describeLinks(['n1', 'n2', 'n4', 'n5'], bridge, members)).toBe('n1,n2 | n4,n5, bridged by n3');
    expect(describeLinks(['n1', 'n3'], between(['n1'], ['n3']), ['n1', 'n2', 'n3'])).toBe(
      'n1 | n3, bridged by n2',
    );
    // Without the members, no bridge is named; a cut that is not a clean split is not called one.
    expect(describeLinks(['n1', 'n3'], between(['n1'], ['n3']))).toBe('n1 | n3');
    expect(describeLinks(['n1', 'n3'], [['n1', 'n3']], members)).toBe('from n1 to n3');
  });
});

describe('describeLinks: packet faults', () => {
  it('says which groups a packet fault degrades links between, not sides as a partition has', () => {
    expect(describeLinks(['n1', 'n2', 'n3'], between(['n1'], ['n2', 'n3']), [], 'packet')).toBe(
      'between n1 and n2,n3',
    );
    expect(describeLinks([], between(['n1'], ['n2'], ['n3']), [], 'packet')).toBe('between n1, n2 and n3');
    expect(describeLinks(['n1', 'n3'], between(['n1'], ['n3']), ['n1', 'n2', 'n3'], 'packet')).toBe(
      'between n1 and n3, not through n2',
    );
    // A partition of the same links keeps its sides.
    expect(describeLinks(['n1', 'n2', 'n3'], between(['n1'], ['n2', 'n3']))).toBe('n1 | n2,n3');
  });

  it('words links aimed at one node alike for both', () => {
    const links: Link[] = [
      ['n3', 'n1'],
      ['n3', 'n2'],
    ];
    expect(describeLinks(['n1', 'n2', 'n3'], links, [], 'packet')).toBe('from n3 to n1,n2');
  });

  it('knows a packet fault by its name', () => {
    expect(linkFaultOf('start-packet')).toBe('packet');
    expect(linkFaultOf('start-partition')).toBe('cut');
  });
});
