import { describe, expect, it } from 'vitest';

import { checkListAppend } from '../../../src/check/txn/check-list-append.js';
import { cycleLine, txnReport } from '../../../src/check/txn/txn-report.js';
import { history, readSkew } from './txn-history.js';

describe('txnReport', () => {
  it('lists each anomaly with its transactions, their lines and the cycle edges', () => {
    const result = checkListAppend(readSkew, { model: 'serializable' });
    const report = txnReport('list-append', result, (op) => op.index + 10);
    expect(report).toMatchObject({
      valid: false,
      model: 'list-append',
      consistency: 'serializable',
      txns: 2,
      anomalyTypes: ['G-single'],
      ruledOut: ['snapshot-isolation', 'repeatable-read'],
      notRuledOut: ['read-committed', 'read-uncommitted'],
    });
    const [anomaly] = report.anomalies;
    expect(anomaly.type).toBe('G-single');
    expect(anomaly.explanation).toMatch(/^G-single: /);
    expect(anomaly.txns.map((t) => [t.name, t.process, t.line])).toEqual(
      expect.arrayContaining([
        ['T2', 0, 12],
        ['T3', 1, 13],
      ]),
    );
    expect(anomaly.edges).toEqual(
      expect.arrayContaining([
        { from: 3, to: 2, type: 'rw', key: 'x', read: null, value: 1 },
        { from: 2, to: 3, type: 'wr', key: 'y', value: 1 },
      ]),
    );
    expect(cycleLine(anomaly.edges)).toMatch(/^T(2|3) -(rw "x"|wr "y")-> T(2|3) -(rw "x"|wr "y")-> T(2|3)$/);
  });

  it('gives a non-cycle anomaly its key, its transactions and no edges', () => {
    const aborted = history(
      [0, 'invoke', [['append', 'x', 1]]],
      [0, 'fail', [['append', 'x', 1]]],
      [1, 'invoke', [['r', 'x', null]]],
      [1, 'ok', [['r', 'x', [1]]]],
    );
    const report = txnReport('list-append', checkListAppend(aborted, { model: 'read-committed' }));
    expect(report.anomalies).toEqual([expect.objectContaining({ type: 'G1a', key: 'x', edges: [] })]);
    expect(report.anomalies[0].txns.map((t) => [t.name, t.type])).toEqual([
      ['T3', 'ok'],
      ['T1', 'fail'],
    ]);
    expect(report.anomalies[0].txns[0]).not.toHaveProperty('line');
  });
});
