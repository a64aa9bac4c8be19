import type { FaultFamily } from '../core/fault.js';
import type { Role } from '../observe/role.js';
import type { Outcome } from './op-series.js';

/** One colour per fault family, the same on every plot and the node timeline. */
export const FAMILY_COLORS: Readonly<Record<FaultFamily, string>> = {
  partition: '#e377c2',
  kill: '#7f7f7f',
  pause: '#1f77b4',
  packet: '#17becf',
  member: '#9467bd',
  clock: '#bcbd22',
  disk: '#8c564b',
};

/** Jepsen's colours for op outcomes. */
export const OUTCOME_COLORS: Readonly<Record<Outcome, string>> = {
  ok: '#2ca02c',
  fail: '#d62728',
  info: '#ff9f1c',
};

export const ROLE_COLORS: Readonly<Record<Role, string>> = {
  leader: '#e6b800',
  candidate: '#8c564b',
  follower: '#cfd8dc',
};

/** Instantaneous faults (no window) and bug markers. */
export const MARK_COLOR = '#111111';
export const BUG_COLOR = '#c00000';
