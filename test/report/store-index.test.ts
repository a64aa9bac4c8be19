import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { writeStoreIndex } from '../../src/report/store-index.js';
import { writeRunReport } from '../../src/report/write-run-report.js';
import { fakeRun } from './_helpers/fake-run.js';

describe('writeStoreIndex', () => {
  const run = fakeRun();
  afterAll(() => {
    rmSync(join(run.store, '..'), { recursive: true, force: true });
  });

  it('lists each run with its outcome, and links its report once it has one', async () => {
    let index = writeStoreIndex(run.store);
    expect(index.html).toBe(join(run.store, 'index.html'));
    expect(index.runs.map((r) => r.dir)).toEqual([run.dir]);
    expect(readFileSync(index.html, 'utf8')).toContain(`mallory report ${run.dir}`);
    await writeRunReport(run.dir);
    index = writeStoreIndex(run.store);
    const page = readFileSync(index.html, 'utf8');
    const rel = run.dir.slice(run.store.length + 1);
    expect(page).toContain(`<a href="${rel}/report.html">report</a>`);
    expect(page).toContain('class="status-complete">complete');
    expect(page).toContain('1: linearizability/register');
  });
});
