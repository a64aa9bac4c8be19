import { describeCrashPoints, DISK_SCHEDULE } from './crash-points.js';

// Every node's data dir a FUSE mount, and its layer a process.
describeCrashPoints({
  system: 'kvraft',
  name: 'kvraft with disk faults',
  schedule: DISK_SCHEDULE,
  skip: undefined,
});
