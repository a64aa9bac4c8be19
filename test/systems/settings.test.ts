import { describe, expect, it } from 'vitest';

import { UsageError } from '../../src/core/errors.js';
import { etcd } from '../../src/systems/etcd/etcd.js';
import { redis } from '../../src/systems/redis/redis.js';
import { describeSettings, parseSetFlags, resolveSettings } from '../../src/systems/settings.js';

describe('system settings (--set NAME=VALUE)', () => {
  it('reads NAME=VALUE flags, and refuses anything else with the shape to use', () => {
    expect(parseSetFlags([])).toEqual({});
    expect(parseSetFlags(['appendfsync=always', 'x.y=a=b'])).toEqual({ appendfsync: 'always', 'x.y': 'a=b' });
    expect(() => parseSetFlags(['appendfsync'])).toThrow(
      '--set needs NAME=VALUE, e.g. --set appendfsync=always; got "appendfsync"',
    );
    expect(() => parseSetFlags(['=always'])).toThrow(UsageError);
    expect(() => parseSetFlags(['a=1', 'a=2'])).toThrow('--set a given twice (1, 2): give it once');
    expect(parseSetFlags(['a=1', 'a=1'])).toEqual({ a: '1' });
  });

  it('fills in every default, and takes the values a system allows', () => {
    expect(resolveSettings(redis, {})).toEqual({ appendfsync: 'everysec' });
    expect(resolveSettings(redis, { appendfsync: 'always' })).toEqual({ appendfsync: 'always' });
    expect(resolveSettings(etcd, {})).toEqual({});
  });

  it('refuses an unknown name or value in one line that lists what the system takes', () => {
    expect(() => resolveSettings(redis, { fsync: 'always' })).toThrow(
      '--set fsync: unknown setting: redis takes appendfsync=everysec|always',
    );
    expect(() => resolveSettings(redis, { appendfsync: 'no' })).toThrow(
      '--set appendfsync=no: redis takes appendfsync=everysec|always (default everysec)',
    );
    expect(() => resolveSettings(etcd, { appendfsync: 'always' })).toThrow(
      '--set appendfsync: unknown setting: etcd has no settings',
    );
    // Names of Object.prototype are not settings.
    expect(() => resolveSettings(redis, { toString: 'x' })).toThrow(/unknown setting/);
    try {
      resolveSettings(redis, { appendfsync: 'no' });
    } catch (e) {
      expect(e).toBeInstanceOf(UsageError);
      expect((e as Error).message).not.toContain('\n');
    }
    expect(describeSettings(redis)).toBe('redis takes appendfsync=everysec|always');
  });

  it('redis declares what its setting promises: a crash of one node under always, a process crash otherwise', () => {
    const durability = (appendfsync: string, nodes: number): string | undefined =>
      redis.create({ bugs: [], settings: { appendfsync }, nodes }).durability;
    expect(durability('everysec', 1)).toBe('process-crash');
    expect(durability('always', 1)).toBe('disk-loss');
    // Asynchronous replication: a failover loses acknowledged writes whatever the disks kept.
    expect(durability('always', 3)).toBe('process-crash');
    expect(durability('everysec', 3)).toBe('process-crash');
    expect(redis.create({ bugs: [] }).durability).toBe('process-crash');
    expect(redis.create({ bugs: [] }).diskFaults).toBe(true);
    const etcdAdapter = etcd.create({ bugs: [] });
    expect(etcdAdapter.diskFaults).toBe(true);
    expect(etcdAdapter.durability).toBe('minority-disk-loss');
  });
});
