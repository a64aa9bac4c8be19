import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import { disposeSandbox, jsonOf, mallory, registryFiles, type Sandbox, sandbox } from './helpers.js';

/** kvraft behind an adapter written outside the repo that keeps lists and registers apart. */
const KIND_SYSTEM = 'test/fixtures/systems/kvraft-txn-kind.ts';

interface Summary {
  readonly runDir: string;
  readonly status: string;
  readonly ops: { readonly ok: number };
  readonly bugs: readonly { readonly kind: string; readonly name: string }[];
}

function jsonLines(file: string): unknown[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as unknown);
}

describe('a transactional system written outside the repo (real processes)', () => {
  const boxes: Sandbox[] = [];
  afterEach(() => {
    for (const b of boxes.splice(0)) disposeSandbox(b);
  });

  it('its transactions client is told which workload runs, and serves it', async () => {
    const box = sandbox();
    boxes.push(box);
    const r = await mallory(
      ['run', '--system', KIND_SYSTEM, '--workload', 'rw-register', '--time', '10s', '--steps', '4'].concat([
        '--faults',
        'kill',
        '--policy',
        'random',
        '--seed',
        '3',
        '--store',
        box.store,
        '--json',
      ]),
      box,
    );
    expect(r.code, r.stderr).toBe(0);
    const summary = jsonOf(r) as Summary;
    expect(summary.status).toBe('complete');
    expect(summary.ops.ok).toBeGreaterThan(50);
    const opened = jsonLines(join(summary.runDir, 'txn-clients.jsonl'));
    expect(opened.length).toBeGreaterThan(0);
    expect(new Set(opened.map((o) => JSON.stringify((o as { context: unknown }).context)))).toEqual(
      new Set([JSON.stringify({ workload: 'rw-register', runs: 'rw-register' })]),
    );
    // --time is the budget for starting schedules; the run says where its whole wall time went.
    const { timing } = jsonOf(r) as { timing: Record<string, number> };
    expect(timing.budgetMs).toBe(10_000);
    expect(timing.startupMs + timing.schedulesMs + timing.stoppingMs).toBe(timing.elapsedMs);
    expect(timing.startupMs).toBeGreaterThan(0);
    expect(timing.schedulesMs).toBeGreaterThan(0);
    expect(r.stderr).toMatch(
      /\n {2}ran \d+(\.\d)? s \(--time 10 s(, \d+(\.\d)? s over)?\): \d+(\.\d)? s start-up, /,
    );
    const results = JSON.parse(readFileSync(join(summary.runDir, 'results.json'), 'utf8')) as {
      timing: unknown;
    };
    expect(results.timing).toEqual(timing);
    expect(registryFiles(box)).toEqual([]);
  });
});
