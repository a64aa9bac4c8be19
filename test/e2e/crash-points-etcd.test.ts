import { describeCrashPoints, SCHEDULE, skipReason } from './crash-points.js';

describeCrashPoints({ system: 'etcd', name: 'etcd', schedule: SCHEDULE, skip: skipReason(['etcd']) });
