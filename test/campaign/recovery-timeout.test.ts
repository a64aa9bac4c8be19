import { describe, expect, it } from 'vitest';

import { DEFAULT_RECOVERY_TIMEOUT_MS, recoveryTimeoutMs } from '../../src/campaign/recovery-timeout.js';
import { etcd } from '../../src/systems/etcd/etcd.js';
import { redis } from '../../src/systems/redis/redis.js';

describe('recoveryTimeoutMs', () => {
  const redisAdapter = redis.create({ bugs: [] });

  it("is what the system declares when the run does not say: redis outlasts Sentinel's 30 s TILT mode", () => {
    expect(recoveryTimeoutMs({}, redisAdapter)).toBe(45_000);
    expect(recoveryTimeoutMs({}, etcd.create({ bugs: [] }))).toBe(DEFAULT_RECOVERY_TIMEOUT_MS);
    expect(DEFAULT_RECOVERY_TIMEOUT_MS).toBe(30_000);
  });

  it('is --recovery-timeout when given, whatever the system declares', () => {
    expect(recoveryTimeoutMs({ recoveryTimeoutMs: 5_000 }, redisAdapter)).toBe(5_000);
    expect(recoveryTimeoutMs({ recoveryTimeoutMs: 90_000 }, {})).toBe(90_000);
  });
});
