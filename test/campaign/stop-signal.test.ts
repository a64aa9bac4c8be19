import { describe, expect, it } from 'vitest';

import {
  endsLikeStop,
  exitStopSignal,
  STOP_SIGNAL_SETTLE_MS,
  StopSignal,
  stopSignalOf,
} from '../../src/campaign/stop-signal.js';
import { NS_PER_MS } from '../../src/core/clock.js';

const STOP_TS = 10_000 * NS_PER_MS;
const stop = { signal: 'SIGTERM' as const, ts: STOP_TS };

function exit(code: number | null, signal: NodeJS.Signals | null, ts: number) {
  return { code, signal, ts };
}

describe('endsLikeStop', () => {
  it.each([
    [0, null],
    [143, null],
    [130, null],
    [129, null],
    [null, 'SIGTERM'],
    [null, 'SIGINT'],
    [null, 'SIGHUP'],
  ] as const)('code %s, signal %s: how a stop signal ends a process', (code, signal) => {
    expect(endsLikeStop({ code, signal })).toBe(true);
  });

  it.each([
    [1, null],
    [2, null],
    [134, null],
    [139, null],
    [null, 'SIGSEGV'],
    [null, 'SIGABRT'],
    [null, 'SIGKILL'],
  ] as const)('code %s, signal %s: a crash, not a stop', (code, signal) => {
    expect(endsLikeStop({ code, signal })).toBe(false);
  });
});

describe('exitStopSignal', () => {
  it('an exit with no stop of the run is never put down to one', () => {
    expect(exitStopSignal(undefined, exit(0, null, STOP_TS))).toBeUndefined();
    expect(exitStopSignal(undefined, exit(null, 'SIGTERM', STOP_TS))).toBeUndefined();
  });

  it('an exit after the stop, or just before it (the signal reached the node first), is the stop’s', () => {
    expect(exitStopSignal(stop, exit(0, null, STOP_TS + 5_000 * NS_PER_MS))).toBe('SIGTERM');
    expect(exitStopSignal(stop, exit(null, 'SIGTERM', STOP_TS - 1 * NS_PER_MS))).toBe('SIGTERM');
    expect(exitStopSignal(stop, exit(143, null, STOP_TS - STOP_SIGNAL_SETTLE_MS * NS_PER_MS))).toBe(
      'SIGTERM',
    );
  });

  it('an exit longer before the stop than the settle stays a crash', () => {
    expect(
      exitStopSignal(stop, exit(0, null, STOP_TS - (STOP_SIGNAL_SETTLE_MS + 1) * NS_PER_MS)),
    ).toBeUndefined();
  });

  it('a crash at the stop (a fault’s signal, an error code) stays a crash', () => {
    expect(exitStopSignal(stop, exit(1, null, STOP_TS + NS_PER_MS))).toBeUndefined();
    expect(exitStopSignal(stop, exit(null, 'SIGSEGV', STOP_TS + NS_PER_MS))).toBeUndefined();
  });
});

describe('stopSignalOf', () => {
  it('names the process signal an abort carries, and nothing for any other abort', () => {
    const bySignal = new AbortController();
    expect(stopSignalOf(bySignal.signal)).toBeUndefined();
    bySignal.abort(new StopSignal('SIGHUP'));
    expect(stopSignalOf(bySignal.signal)).toBe('SIGHUP');
    const other = new AbortController();
    other.abort();
    expect(stopSignalOf(other.signal)).toBeUndefined();
    expect(stopSignalOf(AbortSignal.any([bySignal.signal]))).toBe('SIGHUP');
  });
});
