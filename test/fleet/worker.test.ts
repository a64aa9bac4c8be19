import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { evidenceShape, findingSignature } from '../../src/fleet/worker.js';

describe('evidenceShape', () => {
  it('names a value by its type, null as null', () => {
    expect([1, 'a', true, undefined, null].map((v) => evidenceShape(v))).toEqual([
      'number',
      'string',
      'boolean',
      'undefined',
      'null',
    ]);
  });

  it('keeps the fields, sorted, and drops their values', () => {
    expect(evidenceShape({ value: 3, key: 'x', ok: null })).toBe('{key:string,ok:null,value:number}');
    expect(evidenceShape({ key: 'y', value: 99 })).toBe(evidenceShape({ value: 1, key: 'x' }));
  });

  it('names an array by its first element', () => {
    expect(evidenceShape([1, 'two'])).toBe('[number]');
    expect(evidenceShape(['two', 1])).toBe('[string]');
    expect(evidenceShape([])).toBe('[]');
    expect(evidenceShape({ ops: [{ f: 'read' }] })).toBe('{ops:[{}]}');
  });

  it('looks two levels deep', () => {
    expect(evidenceShape({ a: { b: { c: 1 } }, d: [[1]] })).toBe('{a:{b:{}},d:[[]]}');
    expect(evidenceShape([{ a: 1 }])).toBe('[{a:number}]');
    expect(evidenceShape({ a: { b: 1 } }, 1)).toBe('{a:{}}');
    expect(evidenceShape({ a: 1 }, 0)).toBe('{}');
    expect(evidenceShape([1], 0)).toBe('[]');
  });

  it('is the same for any values of one shape', () => {
    const record = fc.record({
      key: fc.string(),
      value: fc.integer(),
      seen: fc.array(fc.integer(), { minLength: 1 }),
    });
    fc.assert(
      fc.property(record, record, (a, b) => {
        expect(evidenceShape(a)).toBe(evidenceShape(b));
      }),
    );
  });
});

describe('findingSignature', () => {
  const lostWrite = {
    kind: 'linearizability',
    name: 'lost-write',
    evidence: { key: 'k1', ops: [{ f: 'write', value: 3 }] },
  } as const;

  it('is the kind, the name and the shape of the evidence', () => {
    expect(findingSignature(lostWrite)).toBe('linearizability/lost-write {key:string,ops:[{}]}');
  });

  it('is one for two hits that differ in values only', () => {
    const other = { ...lostWrite, evidence: { ops: [{ f: 'read', value: null }], key: 'k9' } };

    expect(findingSignature(other)).toBe(findingSignature(lostWrite));
  });

  it('tells findings of another name, kind or evidence shape apart', () => {
    const signatures = new Set([
      findingSignature(lostWrite),
      findingSignature({ ...lostWrite, name: 'stale-read' }),
      findingSignature({ ...lostWrite, kind: 'set' }),
      findingSignature({ ...lostWrite, evidence: { key: 'k1' } }),
      findingSignature({ ...lostWrite, evidence: { key: 1, ops: [] } }),
    ]);

    expect(signatures.size).toBe(5);
  });
});
