import { describeCrashPoints, SCHEDULE } from './crash-points.js';

// kvraft killed, then partitioned; with disk faults and on etcd: crash-points-*.test.ts.
describeCrashPoints({ system: 'kvraft', name: 'kvraft', schedule: SCHEDULE, skip: undefined });
