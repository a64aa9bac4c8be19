import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { ResultsSchema, resultsJsonSchema } from '../../src/report/results.js';
import { writeRunReport } from '../../src/report/write-run-report.js';
import { fakeRun } from './_helpers/fake-run.js';
import { validateJsonSchema } from './_helpers/validate-json-schema.js';

const SCHEMA_FILE = resolve(import.meta.dirname, '../../src/report/results.schema.json');

describe('results.json schema', () => {
  const run = fakeRun();
  afterAll(() => {
    rmSync(join(run.store, '..'), { recursive: true, force: true });
  });

  it('is committed as the JSON Schema generated from the zod schema (UPDATE_SCHEMA=1 rewrites it)', () => {
    const generated = resultsJsonSchema();
    if (process.env.UPDATE_SCHEMA === '1')
      writeFileSync(SCHEMA_FILE, JSON.stringify(generated, null, 2) + '\n');
    expect(JSON.parse(readFileSync(SCHEMA_FILE, 'utf8'))).toEqual(generated);
  });

  it("validates a run's results.json under both the zod schema and the committed JSON Schema", async () => {
    const { json } = await writeRunReport(run.dir);
    const results = JSON.parse(readFileSync(json, 'utf8')) as unknown;
    expect(ResultsSchema.safeParse(results).success).toBe(true);
    const schema = JSON.parse(readFileSync(SCHEMA_FILE, 'utf8')) as Record<string, unknown>;
    expect(validateJsonSchema(schema, results)).toEqual([]);
  });

  it('is rejected by both when it breaks the schema', async () => {
    const { json } = await writeRunReport(run.dir);
    const schema = JSON.parse(readFileSync(SCHEMA_FILE, 'utf8')) as Record<string, unknown>;
    const good = JSON.parse(readFileSync(json, 'utf8')) as Record<string, unknown>;
    const bad = [
      { ...good, version: 1 },
      { ...good, verdict: { valid: 'yes', checkers: [] } },
      { ...good, status: 'done' },
      { ...good, surprise: true },
      { ...good, counts: { ...(good.counts as object), bugs: -1 } },
    ];
    for (const b of bad) {
      expect(ResultsSchema.safeParse(b).success).toBe(false);
      expect(validateJsonSchema(schema, b)).not.toEqual([]);
    }
  });
});
