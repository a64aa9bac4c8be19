import { describe, expect, it } from 'vitest';

import {
  DEFAULT_RECOVERY_CONTRACT,
  checkRecoveryContract,
  describeRecoveryVerdict,
  measure,
  meets,
  type PerfSample,
} from '../../src/campaign/recovery-contract.js';
import { parseRecoveryContract } from '../../src/cli/run.js';
import type { Op } from '../../src/core/op.js';

const MS = 1e6;

/** `n` ops of one process each taking `latencyMs`, the last `failed` of them failing. */
function window(n: number, latencyMs: number, failed = 0): Op[] {
  const ops: Op[] = [];
  for (let i = 0; i < n; i++) {
    const t = i * 10 * MS;
    const base = { process: i % 3, f: 'read', value: ['k', null] };
    ops.push({ ...base, index: 2 * i, time: t, type: 'invoke' });
    ops.push({ ...base, index: 2 * i + 1, time: t + latencyMs * MS, type: i >= n - failed ? 'fail' : 'ok' });
  }
  return ops;
}

describe('the recovery contract', () => {
  it('measures a window: ok ops per second and their median latency', () => {
    const sample = measure(window(200, 4, 20), 2000, 2000);
    expect(sample).toMatchObject({ okPerSec: 90, p50Ms: 4, ok: 180, failed: 20, unknown: 0 });
    expect(measure([], 2000, 0)).toMatchObject({ okPerSec: 0, p50Ms: null });
  });

  it('is met at the warm-up throughput and latency, not below it', () => {
    const baseline = measure(window(200, 4), 2000, 2000);
    const c = DEFAULT_RECOVERY_CONTRACT;
    expect(meets(measure(window(170, 5), 2000, 0), baseline, c)).toBe(true);
    expect(meets(measure(window(100, 4), 2000, 0), baseline, c)).toBe(false); // half the throughput
    expect(meets(measure(window(200, 40), 2000, 0), baseline, c)).toBe(false); // 10× the latency
    expect(meets(measure([], 2000, 0), baseline, c)).toBe(false);
  });

  it('keeps measuring until a window meets it, or gives up after the bound with the series', async () => {
    const baseline = measure(window(200, 4), 2000, 2000);
    const contract = { ...DEFAULT_RECOVERY_CONTRACT, withinMs: 0 };
    const signal = new AbortController().signal;
    const windows = [window(40, 150), window(200, 4)];
    let calls = 0;
    const recovering = await checkRecoveryContract(
      () => Promise.resolve(windows[Math.min(calls++, 1)]),
      baseline,
      { ...contract, withinMs: 60_000 },
      signal,
    );
    expect(recovering.met).toBe(true);
    expect(recovering.samples.map((s: PerfSample) => s.okPerSec)).toEqual([20, 100]);
    const stuck = await checkRecoveryContract(
      () => Promise.resolve(window(40, 150)),
      baseline,
      contract,
      signal,
    );
    expect(stuck.met).toBe(false);
    expect(stuck.samples).toHaveLength(1);
    expect(describeRecoveryVerdict(stuck, contract)).toContain('last window 20.0 ok/s, p50 150.0 ms');
  });

  it('reads --recovery-contract bounds, defaults filling in', () => {
    expect(parseRecoveryContract(true)).toEqual(DEFAULT_RECOVERY_CONTRACT);
    expect(parseRecoveryContract(undefined)).toBeUndefined();
    expect(parseRecoveryContract('throughput=0.9,within=30s')).toEqual({
      ...DEFAULT_RECOVERY_CONTRACT,
      throughputRatio: 0.9,
      withinMs: 30_000,
    });
    expect(() => parseRecoveryContract('speed=2')).toThrow(/unknown bound "speed"/);
    expect(() => parseRecoveryContract('latency=-1')).toThrow(/not a positive number/);
  });
});
