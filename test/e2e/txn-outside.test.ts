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
    expect(registryFiles(box)).toEqual([]);
  });
});
