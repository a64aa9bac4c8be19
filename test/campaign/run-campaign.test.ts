import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import { effectiveWarmupMs } from '../../src/campaign/campaign.js';
import { RunConfigSchema, type RunConfig } from '../../src/campaign/config.js';
import { DEFAULT_RECOVERY_CONTRACT } from '../../src/campaign/recovery-contract.js';
import { run, UsageError } from '../../src/index.js';

describe('run (the library entry of mallory run)', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  it('refuses a bad config with the field named, before anything starts', async () => {
    const store = join(mkdtempSync(join(tmpdir(), 'mallory-run-')), 'store');
    dirs.push(join(store, '..'));
    const bad = run({ system: 'kvraft', timeMs: -5, store });
    await expect(bad).rejects.toThrow(UsageError);
    await expect(bad).rejects.toThrow(/^config\.timeMs: Number must be greater than 0$/);
    expect(existsSync(store)).toBe(false);
  });

  it('refuses an unknown system or bug switch without making a run directory', async () => {
    const store = join(mkdtempSync(join(tmpdir(), 'mallory-run-')), 'store');
    dirs.push(join(store, '..'));
    await expect(run({ system: 'nosuch', store })).rejects.toThrow(/unknown system "nosuch"/);
    await expect(run({ system: 'kvraft', bugs: ['nosuch'], store })).rejects.toThrow(
      /system kvraft has no bug switch "nosuch"/,
    );
    expect(existsSync(store)).toBe(false);
  });

  it('refuses a setting the system does not have, or a value it does not take, without a run directory', async () => {
    const store = join(mkdtempSync(join(tmpdir(), 'mallory-run-')), 'store');
    dirs.push(join(store, '..'));
    await expect(run({ system: 'redis', settings: { appendfsync: 'no' }, store })).rejects.toThrow(
      '--set appendfsync=no: redis takes appendfsync=everysec|always (default everysec)',
    );
    await expect(run({ system: 'kvraft', settings: { appendfsync: 'always' }, store })).rejects.toThrow(
      '--set appendfsync: unknown setting: kvraft has no settings',
    );
    await expect(run({ system: 'kvraft', durability: 'total' as never, store })).rejects.toThrow(
      /^config\.durability: Invalid enum value/,
    );
    expect(existsSync(store)).toBe(false);
  });
});

describe('the warm-up a run takes before its first fault', () => {
  const config = (extra: Record<string, unknown>): RunConfig =>
    RunConfigSchema.parse({ system: 'kvraft', nodes: 3, seed: 1, timeMs: 60_000, ...extra });

  it('is --warmup, or the recovery contract yardstick when that is longer', () => {
    expect(effectiveWarmupMs(config({}))).toBe(0);
    expect(effectiveWarmupMs(config({ warmupMs: 3000 }))).toBe(3000);
    const contract = { ...DEFAULT_RECOVERY_CONTRACT, windowMs: 2500 };
    expect(effectiveWarmupMs(config({ recoveryContract: contract }))).toBe(5000);
    expect(effectiveWarmupMs(config({ recoveryContract: contract, warmupMs: 8000 }))).toBe(8000);
  });
});
