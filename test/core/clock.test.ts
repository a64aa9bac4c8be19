import { describe, expect, it } from 'vitest';

import { parseDurationMs } from '../../src/core/clock.js';

describe('parseDurationMs', () => {
  it('reads units', () => {
    expect(parseDurationMs('250ms')).toBe(250);
    expect(parseDurationMs('30s')).toBe(30_000);
    expect(parseDurationMs('10m')).toBe(600_000);
    expect(parseDurationMs('1h')).toBe(3_600_000);
    expect(parseDurationMs('5')).toBe(5000);
  });
  it('rejects nonsense with a message saying what to write', () => {
    expect(() => parseDurationMs('ten')).toThrow(/use e.g./);
  });
});
