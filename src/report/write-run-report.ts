import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

import { UsageError } from '../core/errors.js';
import { makeDirs } from '../core/fs.js';
import type { RunStatus } from '../store/run-status.js';
import { isDiskFull } from '../store/store-full.js';
import { reportHtml } from './report-html.js';
import { ResultsSchema, runResults } from './results.js';
import { readRunData } from './run-data.js';

/**
 * Writes a run's `report.html` and `results.json` (into the run directory, or `options.outDir`) and
 * returns their paths. Reads only what the run directory holds, so it works on finished, killed
 * and still running runs alike. Throws when `runDir` is not a run directory.
 */
export async function writeRunReport(
  runDir: string,
  options: { readonly outDir?: string } = {},
): Promise<{ html: string; json: string; status: RunStatus }> {
  const data = await readRunData(runDir);
  const outDir = resolve(options.outDir ?? data.dir);
  makeDirs(outDir, '--out');
  const results = ResultsSchema.parse(runResults(data));
  const json = join(outDir, 'results.json');
  const html = join(outDir, 'report.html');
  try {
    writeFileSync(json, JSON.stringify(results, null, 2) + '\n');
    writeFileSync(html, reportHtml(data, results, outDir));
  } catch (error) {
    if (isDiskFull(error)) {
      throw new UsageError(
        'disk-full',
        `report: the disk under ${outDir} is full: free space there, or write the report elsewhere with --out DIR`,
      );
    }
    throw error;
  }
  return { html, json, status: data.stored.run.status };
}
