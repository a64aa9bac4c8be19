import { describe, expect, it } from 'vitest';

import { connectionCutBefore } from '../../src/campaign/_internals/collect-findings.js';
import type { NodeExit } from '../../src/cluster/cluster.js';
import type { NetworkBackend } from '../../src/cluster/net/backend.js';
import { NS_PER_MS } from '../../src/core/clock.js';

const CUT_NS = 1_000_000 * NS_PER_MS;

/** A backend that reset n1's connections once, at `CUT_NS`, and nobody else's. */
const network = {
  connectionCuts: (node: string) => (node === 'n1' ? [CUT_NS] : []),
} as unknown as NetworkBackend;

function exitAfter(node: string, ms: number): NodeExit {
  return { node, code: 1, signal: null, expected: false, ts: CUT_NS + ms * NS_PER_MS, wallMs: 0 };
}

describe('connectionCutBefore', () => {
  it('puts an exit within 5 s after the backend reset the node’s connections down to it, saying how long after', () => {
    expect(connectionCutBefore(network, exitAfter('n1', 400))).toEqual({
      cause:
        '0.4 s after the harness reset its connections (a delay emulated without netem: connections are redirected through a proxy)',
      by: 'connection-cut',
    });
    expect(connectionCutBefore(network, exitAfter('n1', 5_000))?.by).toBe('connection-cut');
  });

  it('does not explain an exit before the reset, more than 5 s after it, of another node, or with a backend that resets nothing', () => {
    expect(connectionCutBefore(network, exitAfter('n1', -1))).toBeUndefined();
    expect(connectionCutBefore(network, exitAfter('n1', 5_001))).toBeUndefined();
    expect(connectionCutBefore(network, exitAfter('n2', 400))).toBeUndefined();
    expect(connectionCutBefore({} as NetworkBackend, exitAfter('n1', 400))).toBeUndefined();
  });
});
