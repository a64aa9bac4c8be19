import { describe, expect, it } from 'vitest';

import { isRefusal } from '../../src/core/refusal.js';

describe('isRefusal', () => {
  it('is a fail whose connection was refused, in the words of Node, HTTP helpers and clients', () => {
    expect(isRefusal({ type: 'fail', error: 'connect ECONNREFUSED 127.0.0.1:7001' })).toBe(true);
    expect(isRefusal({ type: 'fail', error: 'refused: connect ECONNREFUSED 10.0.0.2:2379' })).toBe(true);
    expect(isRefusal({ type: 'fail', error: 'connection refused' })).toBe(true);
  });

  it('is not any other fail, nor an info or an ok', () => {
    expect(isRefusal({ type: 'fail', error: 'not leader' })).toBe(false);
    expect(isRefusal({ type: 'fail' })).toBe(false);
    expect(isRefusal({ type: 'info', error: 'connect ECONNREFUSED 127.0.0.1:7001' })).toBe(false);
    expect(isRefusal({ type: 'ok' })).toBe(false);
  });
});
