import { describe, expect, it } from 'vitest';

import { MemoryLimitReached } from '../../../src/core/memory-limit.js';
import { MAX_STATES, StateTable } from '../../../src/check/_internals/state-table.js';
import { modelByName } from '../../../src/check/models/by-name.js';

describe('StateTable', () => {
  it('gives equal states one id and throws MemoryLimitReached, not a RangeError, when full', () => {
    const table = new StateTable(modelByName('cas-register'), 2);
    expect(table.id(1)).toBe(0);
    expect(table.id(2)).toBe(1);
    expect(table.id(1)).toBe(0);
    expect(() => table.id(3)).toThrow(MemoryLimitReached);
    expect(() => table.id(3)).toThrow(/2 distinct model states/);
  });

  it('holds no more states than a Map can (2^24 entries)', () => {
    expect(MAX_STATES).toBeLessThan(2 ** 24);
  });
});
