import { describe, expect, it } from 'vitest';

import { netemDstFilterArgs } from '../../../../src/cluster/net/_internals/netem-filter.js';

describe('the netem filter of a degraded link', () => {
  it("sends what the device sends to the address (a /32) into the prio qdisc's band 4, where netem is", () => {
    expect(netemDstFilterArgs('eth0', '10.1.2.3')).toEqual(
      'filter add dev eth0 parent 1: protocol ip prio 1 u32 match ip dst 10.1.2.3/32 flowid 1:4'.split(' '),
    );
  });
});
