import { describe, expect, it } from 'vitest';

import { Rng } from '../../src/core/random.js';
import { rwRegisterTxns } from '../../src/workload/rw-register.js';

describe('rw-register transactions', () => {
  it('write 1, 2, 3, … to each key and read it', () => {
    const gen = rwRegisterTxns(new Rng(3), 's2');
    const ops = Array.from({ length: 1000 }, () => gen.next()).flat();
    expect(new Set(ops.map((op) => op[0]))).toEqual(new Set(['w', 'r']));
    const written = new Map<string, number[]>();
    for (const op of ops) if (op[0] === 'w') written.set(op[1], [...(written.get(op[1]) ?? []), op[2]]);
    for (const values of written.values()) expect(values).toEqual(values.map((_, i) => i + 1));
  });
});
