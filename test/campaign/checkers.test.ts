import { describe, expect, it } from 'vitest';

import { transactionalChecker } from '../../src/campaign/checkers.js';
import type { ScheduleCheckInput } from '../../src/campaign/checker.js';
import type { Op } from '../../src/core/op.js';
import type { SystemAdapter } from '../../src/systems/system.js';

let index = 0;
function op(type: Op['type'], process: number, value: unknown): Op {
  return { index: index++, time: index, type, process, f: 'txn', value };
}

/** Write skew: each reads the key the other appends to, neither sees the other's append. */
function writeSkew(): Op[] {
  index = 0;
  return [
    op('invoke', 0, [
      ['r', 'x', null],
      ['append', 'y', 1],
    ]),
    op('invoke', 1, [
      ['r', 'y', null],
      ['append', 'x', 1],
    ]),
    op('ok', 0, [
      ['r', 'x', null],
      ['append', 'y', 1],
    ]),
    op('ok', 1, [
      ['r', 'y', null],
      ['append', 'x', 1],
    ]),
    op('invoke', 2, [
      ['r', 'x', null],
      ['r', 'y', null],
    ]),
    op('ok', 2, [
      ['r', 'x', [1]],
      ['r', 'y', [1]],
    ]),
  ];
}

function input(ops: Op[], system: Partial<SystemAdapter> = {}): ScheduleCheckInput {
  return { schedule: 0, ops, faults: [], events: [], runDir: '/nowhere', system: system as SystemAdapter };
}

describe('transactionalChecker', () => {
  it('turns anomalies the default model forbids into a txn finding with a page', async () => {
    const [finding, ...rest] = await transactionalChecker('list-append').check(input(writeSkew()));
    expect(rest).toEqual([]);
    expect(finding.kind).toBe('txn');
    expect(finding.name).toBe('not-strict-serializable');
    expect(finding.message).toBe(
      'not strict-serializable (list-append): G2-item ×1; G2-item: T2 read key "x" without 1, which T3 ' +
        'appended (rw); T3 read key "y" without 1, which T2 appended (rw); so T2 would have to come before itself.',
    );
    expect(finding.evidence).toMatchObject({
      valid: false,
      anomalyTypes: ['G2-item'],
      anomalyCounts: { 'G2-item': 1 },
    });
    expect(finding.html).toContain('<section id="G2-item">');
  });

  it('checks against the model the system declares', async () => {
    const system = { transactions: { workloads: ['list-append'], consistency: 'snapshot-isolation' } };
    const findings = await transactionalChecker('list-append').check(input(writeSkew(), system as never));
    expect(findings).toEqual([]);
  });

  it('passes a history without anomalies, and skips nemesis ops', async () => {
    index = 0;
    const ops = [
      op('invoke', 0, [['append', 'x', 1]]),
      { index: index++, time: index, type: 'info', process: 'nemesis', f: 'kill', value: ['n1'] } as Op,
      op('ok', 0, [['append', 'x', 1]]),
      op('invoke', 1, [['r', 'x', null]]),
      op('ok', 1, [['r', 'x', [1]]]),
    ];
    expect(await transactionalChecker('list-append').check(input(ops))).toEqual([]);
  });

  it('reports a history whose replies do not fit the checker', async () => {
    index = 0;
    const ops = [op('invoke', 0, [['r', 'x', null]]), op('ok', 0, [['r', 'x', 5]])];
    const [finding] = await transactionalChecker('list-append').check(input(ops));
    expect(finding).toMatchObject({ kind: 'txn', name: 'malformed-history' });
    expect(finding.message).toContain('list');
  });
});
