import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { disposeSandbox, mallory, type Sandbox, sandbox, jsonOf } from './helpers.js';

// The recovery contract on real processes (examples/tiny-kv): its primary killed and restarted;
// with `slow-restart` it serves again at once but 150 ms late for a minute.

interface Summary {
  readonly status: string;
  readonly bugs: readonly {
    readonly kind: string;
    readonly name: string;
    readonly message: string;
    readonly dir: string;
  }[];
}

const SCHEDULE = [
  '{"atMs": 2000, "f": "kill", "nodes": ["n1"]}',
  '{"atMs": 3000, "f": "start", "nodes": ["n1"]}',
];

describe('--recovery-contract (tiny-kv, real processes)', () => {
  const box: Sandbox = sandbox();
  const schedule = join(box.store, '..', 'kill-primary.jsonl');
  writeFileSync(schedule, SCHEDULE.join('\n') + '\n');
  afterAll(() => {
    disposeSandbox(box);
  });

  async function run(...bugs: string[]): Promise<{ summary: Summary; stderr: string }> {
    const args = ['run', '--system', 'examples/tiny-kv/system.ts', '--schedule', schedule, '--steps', '3'];
    args.push(
      '--seed',
      '1',
      '--time',
      '5m',
      '--recovery-contract',
      'within=10s',
      '--store',
      box.store,
      '--json',
    );
    for (const bug of bugs) args.push('--bug', bug);
    const r = await mallory(args, box, 120_000);
    expect(r.stdout, r.stderr).not.toBe('');
    return { summary: jsonOf(r) as Summary, stderr: r.stderr };
  }

  it('a system back to its warm-up throughput and latency meets it', async () => {
    const { summary, stderr } = await run();
    expect(summary.status).toBe('complete');
    expect(stderr).toMatch(/warm-up: [\d.]+ ok\/s, p50 [\d.]+ ms/);
    expect(summary.bugs).toEqual([]);
  });

  it('one that serves again but slower is a slow-recovery finding, with the time series', async () => {
    const { summary } = await run('slow-restart');
    expect(summary.status).toBe('complete');
    const finding = summary.bugs.find((b) => b.name === 'slow-recovery');
    expect(finding?.kind).toBe('recovery');
    expect(finding?.message).toMatch(/did not get back to its warm-up performance within 10 s/);
    expect(finding?.message).toMatch(/p50 1\d\d\.\d ms/);
    const evidence = JSON.parse(readFileSync(join(finding!.dir, 'evidence.json'), 'utf8')) as {
      met: boolean;
      samples: { okPerSec: number; p50Ms: number }[];
    };
    expect(evidence.met).toBe(false);
    expect(evidence.samples.length).toBeGreaterThanOrEqual(3);
    for (const sample of evidence.samples) expect(sample.p50Ms).toBeGreaterThan(100);
  });
});
