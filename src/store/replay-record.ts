import { appendFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import { z } from 'zod';

/** Every `mallory replay` of a bug's own schedule, a line each: `bugs/<id>/replays.jsonl`. */
export const REPLAYS_FILE = 'replays.jsonl';

const LineSchema = z.object({
  atMs: z.number(),
  start: z.enum(['checkpoint', 'fresh']),
  reproduced: z.number().int().nonnegative(),
  tries: z.number().int().nonnegative(),
});
export type ReplayRecord = z.infer<typeof LineSchema>;

/** How often each start reproduced the bug, over its recorded replays. */
export interface ReplayRate {
  readonly reproduced: number;
  readonly tries: number;
}

/** What the recorded replays say of the bug: its rate from each start, and whether they differ. */
export interface StateDependence {
  readonly checkpoint: ReplayRate | null;
  readonly fresh: ReplayRate | null;
  /**
   * From its checkpoint it reproduces in a majority of the tries, from empty data dirs never: the
   * finding depends on the state the schedules before it left.
   */
  readonly dependsOnState: boolean;
}

/** Reproduced in a majority of the tries: never 1 of 2. What shrink keeps a candidate by, too. */
export function inMajority(reproduced: number, tries: number): boolean {
  return reproduced * 2 > tries;
}

/** Adds one replay of the bug's own schedule to its record. */
export function recordReplay(bugDir: string, line: ReplayRecord): void {
  appendFileSync(join(bugDir, REPLAYS_FILE), JSON.stringify(line) + '\n');
}

/** The recorded replays of a bug, summed per start; undefined when it was never replayed. */
export function stateDependence(bugDir: string): StateDependence | undefined {
  let text: string;
  try {
    text = readFileSync(join(bugDir, REPLAYS_FILE), 'utf8');
  } catch {
    return undefined;
  }
  const sums = { checkpoint: { reproduced: 0, tries: 0 }, fresh: { reproduced: 0, tries: 0 } };
  for (const raw of text.split('\n')) {
    if (raw.trim() === '') continue;
    let json: unknown;
    try {
      json = JSON.parse(raw);
    } catch {
      continue; // a line cut short by a crash
    }
    const parsed = LineSchema.safeParse(json);
    if (!parsed.success) continue;
    const sum = sums[parsed.data.start];
    sum.reproduced += parsed.data.reproduced;
    sum.tries += parsed.data.tries;
  }
  const rate = (r: ReplayRate): ReplayRate | null => (r.tries > 0 ? r : null);
  const checkpoint = rate(sums.checkpoint);
  const fresh = rate(sums.fresh);
  if (checkpoint === null && fresh === null) return undefined;
  const dependsOnState =
    checkpoint !== null &&
    fresh !== null &&
    inMajority(checkpoint.reproduced, checkpoint.tries) &&
    fresh.reproduced === 0;
  return { checkpoint, fresh, dependsOnState };
}

/** One line for the terminal and the report: each start's rate, and what the difference means. */
export function describeDependence(d: StateDependence): string {
  const rate = (r: ReplayRate | null): string => (r === null ? 'not tried' : `${r.reproduced}/${r.tries}`);
  const rates = `from its checkpoint ${rate(d.checkpoint)}, from empty data dirs ${rate(d.fresh)}`;
  return d.dependsOnState
    ? `the finding depends on the state the schedules before it left: ${rates}`
    : `replayed ${rates}`;
}
