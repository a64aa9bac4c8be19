import { rmSync } from 'node:fs';
import { join } from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import { mallory, type Sandbox, sandbox } from '../../e2e/helpers.js';

// Each bug switch with its scripted fault schedule through `mallory run --schedule`: the
// campaign's checks catch the bug, and the same schedule with the switch off is clean.

const SCHEDULES = join(import.meta.dirname, 'schedules');

interface Summary {
  readonly status: string;
  readonly bugs: readonly { kind: string; name: string; message: string }[];
  readonly ops: { ok: number };
}

const boxes: Sandbox[] = [];
afterEach(() => {
  for (const b of boxes.splice(0)) rmSync(join(b.store, '..'), { recursive: true, force: true });
});

async function run(
  schedule: string,
  steps: number,
  bug?: string,
): Promise<{ code: number | null; summary: Summary }> {
  const box = sandbox();
  boxes.push(box);
  const args = ['run', '--time', '1s', '--seed', '7', '--steps', `${steps}`, '--store', box.store, '--json'];
  args.push('--schedule', join(SCHEDULES, `${schedule}.jsonl`));
  if (bug) args.push('--bug', bug);
  const r = await mallory(args, box, 120_000);
  return { code: r.code, summary: JSON.parse(r.stdout) as Summary };
}

const CASES = [
  { bug: 'stale-read', steps: 8, kinds: ['linearizability'] },
  { bug: 'ack-before-commit', steps: 6, kinds: ['linearizability'] },
  { bug: 'vote-without-log-check', steps: 9, kinds: ['crash'] },
] as const;

describe('kvraft bug switches under scripted schedules (mallory run)', () => {
  for (const c of CASES) {
    it(`${c.bug}: the schedule exposes it and the checks catch it`, async () => {
      const { code, summary } = await run(c.bug, c.steps, c.bug);
      expect(summary.status).toBe('complete');
      expect(code).toBe(1);
      const kinds = new Set(summary.bugs.map((b) => b.kind));
      for (const k of c.kinds) expect(kinds).toContain(k);
    });

    it(`${c.bug}: the same schedule with the switch off is clean`, async () => {
      const { code, summary } = await run(c.bug, c.steps);
      expect(summary.status).toBe('complete');
      expect(summary.bugs).toEqual([]);
      expect(summary.ops.ok).toBeGreaterThan(500);
      expect(code).toBe(0);
    });
  }
});
