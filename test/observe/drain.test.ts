import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { Drain, WILDCARD } from '../../src/observe/drain.js';

describe('Drain', () => {
  it('gives lines that differ only in variables one template', () => {
    const d = new Drain();
    const a = d.add('n1 became leader at term 3');
    const b = d.add('n2 became leader at term 17');
    expect(b.id).toBe(a.id);
    expect(d.template(a.id)).toBe(`${WILDCARD} became leader at term ${WILDCARD}`);
    const c = d.add('received append entries from 10.0.0.2:8080 index 12');
    expect(c.id).not.toBe(a.id);
  });

  it('masks ids, addresses, UUIDs, hex and paths', () => {
    const d = new Drain();
    const lines = [
      'opened /var/lib/node1/wal/0001.log for peer 7e3a9b1c at 192.168.1.4:2380',
      'opened /tmp/x/y/z.log for peer 0xdeadbeef at [::1]:2381',
      'opened /data/n3/wal/9.log for peer 5f1e2d3c4b at localhost:2382',
    ];
    const ids = lines.map((l) => d.add(l).id);
    expect(new Set(ids).size).toBe(1);
    const u1 = d.add('request 123e4567-e89b-12d3-a456-426614174000 done in 12ms');
    const u2 = d.add('request 00000000-0000-4000-8000-000000000000 done in 3.5s');
    expect(u2.id).toBe(u1.id);
  });

  it('keeps ids stable as templates generalise, and separates different statements', () => {
    const d = new Drain();
    const first = d.add('commit index advanced to 5');
    d.add('leader lost, starting election');
    d.add('commit index advanced to 900');
    expect(d.add('commit index advanced to 7').id).toBe(first.id);
    expect(d.add('leader lost, starting election').id).toBe('L2');
    expect(d.templates()).toHaveLength(2);
  });

  it('is deterministic: the same lines give the same ids', () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom('a 1 b', 'a 2 b', 'c d e', 'c d f 9', 'x'), { maxLength: 30 }),
        (lines) => {
          const d1 = new Drain();
          const d2 = new Drain();
          expect(lines.map((l) => d1.add(l).id)).toEqual(lines.map((l) => d2.add(l).id));
        },
      ),
    );
  });

  it('validates its options', () => {
    expect(() => new Drain({ depth: 2 })).toThrow(/depth/);
    expect(() => new Drain({ similarity: 2 })).toThrow(/similarity/);
  });
});

describe('Drain.load', () => {
  it('restores templates so a later run gives the same ids', () => {
    const first = new Drain();
    first.add('snapshot taken at index 5');
    first.add('became leader at term 2');
    first.add('snapshot taken at index 9');
    const saved = JSON.parse(JSON.stringify(first.templates())) as ReturnType<Drain['templates']>;
    const later = new Drain();
    later.load(saved);
    expect(later.add('became leader at term 7').id).toBe('L2');
    expect(later.add('snapshot taken at index 77').id).toBe('L1');
    expect(later.add('something new').id).toBe('L3');
    expect(() => {
      later.load(saved);
    }).toThrow(/before any line/);
    expect(() => {
      new Drain().load([{ id: 'L2', tokens: ['x'], size: 1 }]);
    }).toThrow(/without gaps/);
  });
});

describe('Drain.maxTemplates', () => {
  it('sends lines beyond the template budget to the overflow type', () => {
    const d = new Drain({ maxTemplates: 2 });
    expect(d.add('alpha beta').id).toBe('L1');
    expect(d.add('gamma delta epsilon').id).toBe('L2');
    expect(d.add('zeta eta theta iota').id).toBe('L0');
    expect(d.add('alpha beta').id).toBe('L1');
    expect(d.templates()).toHaveLength(2);
  });
});

describe('Drain constant words', () => {
  it('keeps lines apart that differ in constant words, but still merges variables', () => {
    const d = new Drain();
    const a = d.add('7e3a9b1c received MsgVoteResp from 5f1e2d3c at term 3');
    const b = d.add('7e3a9b1c received MsgAppResp from 5f1e2d3c at term 3');
    const c = d.add('n1 append accepted role=leader');
    const e = d.add('n1 append rejected role=leader');
    const f = d.add('n2 append accepted role=leader');
    expect(new Set([a.id, b.id, c.id, e.id]).size).toBe(4);
    expect(f.id).toBe(c.id);
  });

  it('falls back to plain Drain once a leaf is crowded by variable words', () => {
    const d = new Drain({ wordSplitLimit: 3 });
    const ids = ['alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta'].map(
      (k) => d.add(`lookup failed for key ${k}`).id,
    );
    expect(new Set(ids).size).toBe(3);
    expect(new Drain({ wordSplitLimit: 0 }).add('x accepted').id).toBe('L1');
  });
});
