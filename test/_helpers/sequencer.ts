import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * Runs the longest test files first, so that files running side by side end together instead of
 * one long file starting last. A file's time is vitest's own record of its last run where there is
 * one (a checkout that has run the tests), else the time measured here and kept in
 * `test/durations.json` (a fresh clone, as in CI: vitest would otherwise order by file size, and a
 * short file can hold a long suite). Files in neither run first, as vitest runs unknown files.
 */
export class LongestFirstSequencer extends BaseSequencer {
  private readonly measured = readMeasured();

  override sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const root = this.ctx.config.root;
    const durationOf = (spec: TestSpecification): number | undefined => {
      const file = relative(root, spec.moduleId);
      const cached = this.ctx.cache.getFileTestResults(`${spec.project.name}:${file}`);
      return cached?.duration ?? this.measured[file];
    };
    const order = files.map((spec) => ({ spec, ms: durationOf(spec) }));
    order.sort((a, b) => {
      if (a.ms === undefined || b.ms === undefined) return a.ms === b.ms ? 0 : a.ms === undefined ? -1 : 1;
      return b.ms - a.ms;
    });
    return Promise.resolve(order.map((o) => o.spec));
  }
}

/** File (relative to the repository) → its time in ms, as measured in a full run here. */
function readMeasured(): Record<string, number> {
  const path = join(import.meta.dirname, '..', 'durations.json');
  const table = JSON.parse(readFileSync(path, 'utf8')) as { files: Record<string, number> };
  return table.files;
}
