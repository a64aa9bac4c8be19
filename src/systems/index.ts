import { dqlite } from './dqlite/dqlite.js';
import { etcd } from './etcd/etcd.js';
import { redis } from './redis/redis.js';
import type { SystemDefinition } from './system.js';

/** Every system `mallory run --system NAME` can drive, by name. */
export const SYSTEMS: Readonly<Record<string, SystemDefinition>> = {
  dqlite,
  etcd,
  redis,
};
