import { describe, expect, it } from 'vitest';

import { checkListAppend } from '../../../src/check/txn/check-list-append.js';
import { renderTxnHtml } from '../../../src/check/txn/txn-html.js';
import { txnReport } from '../../../src/check/txn/txn-report.js';
import { readSkew, serial } from './txn-history.js';

describe('renderTxnHtml', () => {
  it('shows the verdict, the models ruled out and each anomaly with its transactions and edges', () => {
    const report = txnReport('list-append', checkListAppend(readSkew, { model: 'serializable' }));
    const page = renderTxnHtml(report, { title: 'skew <1>' });
    expect(page).toContain('<title>skew &#60;1&#62;: not serializable</title>');
    expect(page).toContain('<p class="verdict invalid">not serializable</p>');
    expect(page).toContain('Ruled out: snapshot-isolation, repeatable-read (and every stronger model).');
    expect(page).toContain('Not ruled out: read-committed, read-uncommitted.');
    expect(page).toContain('<section id="G-single"><h2>G-single (1)</h2>');
    expect(page).toMatch(/<tr data-index="2"><td>T2<\/td><td>0<\/td><td>ok txn<\/td>/);
    expect(page).toContain(
      '<td class="edge-type">rw</td><td>&#34;x&#34;</td><td>read an empty list, then 1 was appended</td>',
    );
    expect(page).toContain(
      '<td class="edge-type">wr</td><td>&#34;y&#34;</td><td>appended 1, which was read</td>',
    );
    expect(page).not.toMatch(/<script|src=|href=/);
  });

  it('says when nothing was found', () => {
    const report = txnReport(
      'list-append',
      checkListAppend(serial([0, 'ok', [['append', 'x', 1]]]), { model: 'strict-serializable' }),
    );
    const page = renderTxnHtml(report);
    expect(page).toContain('<p class="verdict valid">strict-serializable</p>');
    expect(page).toContain('Ruled out: none.');
    expect(page).toContain('<p>No anomalies found.</p>');
  });
});
