import { describe, expect, it } from 'vitest';

import { candidateSubnets, chooseSubnet, prefixesIn } from '../../../../src/cluster/net/_internals/subnet.js';

describe('chooseSubnet', () => {
  it('is stable per run id and stays inside 10.0.0.0/8', () => {
    const a = chooseSubnet('run-1', []);
    expect(chooseSubnet('run-1', [])).toEqual(a);
    expect(a.cidr).toMatch(/^10\.\d+\.\d+\.0\/24$/);
  });

  it('skips a /24 that a route or address already uses, but not a wide route', () => {
    const first = chooseSubnet('run-2', []);
    expect(chooseSubnet('run-2', [first.cidr]).cidr).not.toBe(first.cidr);
    expect(chooseSubnet('run-2', [`${first.base}.7`]).cidr).not.toBe(first.cidr);
    expect(chooseSubnet('run-2', ['10.0.0.0/8', '0.0.0.0/0']).cidr).toBe(first.cidr);
  });

  it("always picks one of the run's candidates, in their order", () => {
    const candidates = candidateSubnets('run-3', 4);
    expect(chooseSubnet('run-3', [])).toEqual(candidates[0]);
    const taken = [candidates[0].cidr, candidates[1].cidr];
    expect(chooseSubnet('run-3', taken)).toEqual(candidates[2]);
  });

  it('takes the subnet it is given when that is free (a start from a checkpoint), else its own', () => {
    const candidates = candidateSubnets('run-4', 2);
    expect(chooseSubnet('run-4', [], '10.77.3.0/24')).toEqual({ base: '10.77.3', cidr: '10.77.3.0/24' });
    expect(chooseSubnet('run-4', ['10.77.3.0/24'], '10.77.3.0/24')).toEqual(candidates[0]);
    // Anything but a 10.a.b.0/24 is not taken from a manifest.
    expect(chooseSubnet('run-4', [], '192.168.1.0/24')).toEqual(candidates[0]);
    expect(chooseSubnet('run-4', [], '10.300.1.0/24')).toEqual(candidates[0]);
  });

  it('reads prefixes from ip output', () => {
    const text =
      'default via 192.0.2.1 dev eth0\n10.4.5.0/24 dev mlrabc proto kernel scope link src 10.4.5.254';
    expect(prefixesIn(text)).toEqual(['192.0.2.1', '10.4.5.0/24', '10.4.5.254']);
  });
});
