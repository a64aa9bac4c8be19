import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';

import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';

import { mallory, sandbox, jsonOf } from './helpers.js';

interface Summary {
  readonly runDir: string;
  readonly status: string;
}

/** The run's mined log templates: id → tokens. */
function templates(runDir: string): Map<string, string[]> {
  const db = new Database(join(runDir, 'run.db'), { readonly: true });
  try {
    const rows = db.prepare('SELECT id, tokens FROM log_templates').all() as { id: string; tokens: string }[];
    return new Map(rows.map((r) => [r.id, JSON.parse(r.tokens) as string[]]));
  } finally {
    db.close();
  }
}

/** The bugs a run's JSON summary names, one line each (what a failed expectation shows). */
function bugsOf(stdout: string): string {
  try {
    const { bugs } = JSON.parse(stdout) as { bugs?: { kind: string; name: string; message: string }[] };
    return (bugs ?? []).map((b) => `${b.kind}/${b.name}: ${b.message.slice(0, 600)}\n`).join('');
  } catch {
    return stdout.slice(0, 2000);
  }
}

function globalVisits(runDir: string): number {
  const db = new Database(join(runDir, 'run.db'), { readonly: true });
  try {
    const row = db
      .prepare("SELECT SUM(visits) AS n FROM policy_values WHERE policy = 'adaptive' AND state = '*'")
      .get() as { n: number | null };
    return row.n ?? 0;
  } finally {
    db.close();
  }
}

describe('mallory run --seed-from (kvraft, real processes)', () => {
  const box = sandbox();
  afterAll(() => {
    rmSync(join(box.store, '..'), { recursive: true, force: true });
  });

  it('starts from what an earlier run learnt: its decisions add to the earlier ones', async () => {
    const common = ['run', '--time', '12s', '--steps', '4', '--store', box.store, '--json'];
    const first = await mallory([...common, '--seed', '31'], box);
    expect(first.code, bugsOf(first.stdout) + first.stderr).toBe(0);
    const a = jsonOf(first) as Summary;
    const before = globalVisits(a.runDir);
    expect(before).toBeGreaterThan(0);
    const second = await mallory([...common, '--seed', '32', '--seed-from', a.runDir], box);
    expect(second.code, bugsOf(second.stdout) + second.stderr).toBe(0);
    const b = jsonOf(second) as Summary;
    expect(globalVisits(b.runDir)).toBeGreaterThan(before);
    // The log lines the two runs share have the same ids (event types) in both: the seeded run
    // loaded the first one's templates before reading a line (a template may have generalised
    // since, but it is the same statement: as many tokens).
    const [mined, seeded] = [templates(a.runDir), templates(b.runDir)];
    expect(mined.size).toBeGreaterThan(0);
    for (const [id, tokens] of mined) expect(seeded.get(id)?.length, id).toBe(tokens.length);
  });

  it('refuses a directory that is not a run, or a run of another policy, and creates no run', async () => {
    const runs = (): number => readdirSync(join(box.store, 'kvraft')).length;
    const count = runs();
    const bad = await mallory(['run', '--time', '5s', '--store', box.store, '--seed-from', box.store], box);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--seed-from: .* is not a run directory/);
    const latest = join(box.store, 'kvraft', readdirSync(join(box.store, 'kvraft')).sort()[0]);
    const other = await mallory(
      ['run', '--time', '5s', '--policy', 'random', '--store', box.store, '--seed-from', latest],
      box,
    );
    expect(other.code).toBe(2);
    expect(other.stderr).toContain('same system and policy');
    expect(runs()).toBe(count);
  });
});
