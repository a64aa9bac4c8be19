import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

import { expect } from 'vitest';

import { jsonOf, malloryJson, type Sandbox } from './helpers.js';

/** A worker's record of one index (`<plan>/campaigns/<index>.json`), as the tests read it. */
export interface FleetRecord {
  readonly index: number;
  readonly status: string;
  readonly attempt: number;
  readonly runDir?: string;
  readonly elapsedMs?: number;
  readonly replaced?: readonly string[];
}

/** A plan of four 8 s kvraft campaigns (adaptive and random, seeds 3 and 4) in the sandbox's store; its file. */
export function planOf(box: Sandbox, id: string, extra: readonly string[] = []): string {
  const r = malloryJson(
    [
      'plan',
      '--policies',
      'adaptive,random',
      '--seeds',
      '2',
      '--seed',
      '3',
      '--time',
      '8s',
      '--store',
      box.store,
      '--id',
      id,
      '--json',
      ...extra,
    ],
    box,
  );
  expect(r.code, r.stderr).toBe(0);
  return (jsonOf(r) as { file: string }).file;
}

/**
 * The record of `index`, or undefined before a worker has claimed it; its run dirs (kept relative
 * to the plan's folder) made absolute.
 */
export function recordOf(planFile: string, index: number): FleetRecord | undefined {
  const dir = dirname(planFile);
  const file = join(dir, 'campaigns', `${index}.json`);
  if (!existsSync(file)) return undefined;
  const record = JSON.parse(readFileSync(file, 'utf8')) as FleetRecord;
  return {
    ...record,
    ...(record.runDir !== undefined ? { runDir: resolve(dir, record.runDir) } : {}),
    ...(record.replaced !== undefined ? { replaced: record.replaced.map((r) => resolve(dir, r)) } : {}),
  };
}
