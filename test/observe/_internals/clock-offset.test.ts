import { describe, expect, it } from 'vitest';

import { clockOffset, toFuzzerNs } from '../../../src/observe/_internals/clock-offset.js';

const MS = 1e6;
const T0 = 1_780_000_000_000 * MS;
/** Wall-clock ns as JS numbers are exact to 256 ns only. */
const NS_STEP = 256;

function near(actual: number, expected: number): void {
  expect(Math.abs(actual - expected)).toBeLessThanOrEqual(NS_STEP);
}

describe('clockOffset', () => {
  it("puts a host's reading in the middle of its round trip", () => {
    // The host's clock runs 5 s ahead; it answered 2 ms after being asked, with 4 ms round trip.
    const offset = clockOffset([{ sentNs: T0, hostNs: T0 + 5000 * MS + 2 * MS, receivedNs: T0 + 4 * MS }]);
    near(offset.offsetNs, 5000 * MS);
    near(offset.errorNs, 2 * MS);
  });

  it('keeps the sample with the shortest round trip', () => {
    const offset = clockOffset([
      // A slow round trip whose reading came late: taken alone it would be off by 30 ms.
      { sentNs: T0, hostNs: T0 - 250 * MS + 80 * MS, receivedNs: T0 + 100 * MS },
      { sentNs: T0 + 200 * MS, hostNs: T0 - 250 * MS + 201 * MS, receivedNs: T0 + 202 * MS },
      { sentNs: T0 + 300 * MS, hostNs: T0 - 250 * MS + 305 * MS, receivedNs: T0 + 310 * MS },
    ]);
    near(offset.offsetNs, -250 * MS);
    near(offset.errorNs, 1 * MS);
  });

  it('refuses no samples', () => {
    expect(() => clockOffset([])).toThrow('at least one sample');
  });
});

describe('toFuzzerNs', () => {
  it("orders two hosts' stamps of one message by the fuzzer's clock", () => {
    // Host A runs 3 s ahead, host B 2 s behind; A sends at fuzzer time T0, B receives 1 ms later.
    const a = clockOffset([{ sentNs: T0, hostNs: T0 + 3000 * MS, receivedNs: T0 }]);
    const b = clockOffset([{ sentNs: T0, hostNs: T0 - 2000 * MS, receivedNs: T0 }]);
    const sendStampedByA = T0 + 3000 * MS;
    const recvStampedByB = T0 + 1 * MS - 2000 * MS;
    // Raw, the receive looks 5 s before the send; corrected, it is 1 ms after.
    expect(recvStampedByB).toBeLessThan(sendStampedByA);
    near(toFuzzerNs(sendStampedByA, a), T0);
    near(toFuzzerNs(recvStampedByB, b), T0 + 1 * MS);
    expect(toFuzzerNs(recvStampedByB, b)).toBeGreaterThan(toFuzzerNs(sendStampedByA, a));
  });
});
