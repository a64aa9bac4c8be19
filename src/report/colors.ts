import type { Role } from '../observe/role.js';
import type { Outcome } from './op-series.js';

/** One colour per fault family, the same on every plot, the node timeline and check.html. */
export { FAMILY_COLORS } from '../core/fault-colors.js';

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
