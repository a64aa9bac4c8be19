import { describe, expect, it } from 'vitest';

import { settleExits } from '../../src/campaign/_internals/collect-findings.js';
import { RunState } from '../../src/campaign/_internals/run-state.js';
import { STOP_SIGNAL_SETTLE_MS } from '../../src/campaign/stop-signal.js';
import type { NodeExit } from '../../src/cluster/cluster.js';
import { type Clock, NS_PER_MS } from '../../src/core/clock.js';

/** A clock whose sleeps pass at once, moving its time on and then running `onSleep`. */
function steppedClock(onSleep: (nowNs: number) => void): Clock & { nowNs: number } {
  const clock = {
    nowNs: 0,
    nowMs: () => clock.nowNs / NS_PER_MS,
    monoNs: () => clock.nowNs,
    sleep: (ms: number) => {
      clock.nowNs += Math.max(0, ms) * NS_PER_MS;
      onSleep(clock.nowNs);
      return Promise.resolve();
    },
    timer: () => () => undefined,
    every: () => () => undefined,
  };
  return clock;
}

function crashAt(node: string, ts: number): NodeExit {
  return { node, code: 1, signal: null, expected: false, ts, wallMs: 0 };
}

describe('settleExits', () => {
  it('waits until every unexpected exit is the settle old, one that came during the wait too', async () => {
    const state = new RunState();
    state.exits.push(crashAt('n1', 0));
    const lateNs = (STOP_SIGNAL_SETTLE_MS - 10) * NS_PER_MS;
    let sleeps = 0;
    const clock = steppedClock(() => {
      // n2 exits during the first wait, 10 ms before it ends.
      if (sleeps++ === 0) state.exits.push(crashAt('n2', lateNs));
    });

    await settleExits({ state, signal: new AbortController().signal, clock });

    expect(clock.nowNs).toBe(lateNs + STOP_SIGNAL_SETTLE_MS * NS_PER_MS);
  });

  it('does not wait for exits the harness asked for, nor once the run is stopped', async () => {
    const state = new RunState();
    state.exits.push({ ...crashAt('n1', 0), expected: true });
    const clock = steppedClock(() => undefined);
    await settleExits({ state, signal: new AbortController().signal, clock });
    expect(clock.nowNs).toBe(0);

    state.exits.push(crashAt('n2', 0));
    await settleExits({ state, signal: AbortSignal.abort(), clock });
    expect(clock.nowNs).toBe(0);
  });
});
