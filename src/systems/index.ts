import { dqlite, dqliteApp } from './dqlite/dqlite.js';
import { etcd } from './etcd/etcd.js';
import { kvraft } from './kvraft/index.js';
import { redis } from './redis/redis.js';
import type { SystemDefinition } from './system.js';

/** Every system `mallory run --system NAME` knows. */
export const SYSTEMS: Readonly<Record<string, SystemDefinition>> = {
  kvraft,
  dqlite,
  'dqlite-app': dqliteApp,
  etcd,
  redis,
};
