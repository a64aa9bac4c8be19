import { FAMILY_KINDS, type FaultFamily } from './fault.js';

/** One colour per fault family, the same on every page (run report and check.html). */
export const FAMILY_COLORS: Readonly<Record<FaultFamily, string>> = {
  partition: '#e377c2',
  kill: '#7f7f7f',
  pause: '#1f77b4',
  packet: '#17becf',
  member: '#9467bd',
  clock: '#bcbd22',
  disk: '#8c564b',
};

/** The colour of a fault no family has (e.g. `heal-all`, a trigger). */
export const OTHER_FAULT_COLOR = '#f4a261';

/** The family a fault kind (`start-partition`, `kill`, …) belongs to, if any. */
export function familyOf(f: string): FaultFamily | undefined {
  for (const [family, kinds] of Object.entries(FAMILY_KINDS)) {
    if ((kinds as readonly string[]).includes(f)) return family as FaultFamily;
  }
  return undefined;
}

/** The colour of a fault kind: its family's, else OTHER_FAULT_COLOR. */
export function faultColor(f: string): string {
  const family = familyOf(f);
  return family === undefined ? OTHER_FAULT_COLOR : FAMILY_COLORS[family];
}
