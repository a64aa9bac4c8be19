import { z } from 'zod';

/**
 * What a run that replays a bug is a try of (`mallory replay`, `mallory shrink`): kept in its
 * configuration (`run.db`, `results.json`), so the store's index shows it under the bug, not as a
 * campaign.
 */
export const ReplayOfSchema = z
  .object({
    /** `replay`, or `shrink` (a try of one of the shrinker's candidate schedules). */
    kind: z.enum(['replay', 'shrink']),
    /** The bug's directory (`<run>/bugs/<id>`), absolute. */
    bugDir: z.string().min(1),
    /** The run that found the bug, absolute; absent when the bug dir is not inside a run. */
    run: z.string().min(1).optional(),
    /** The bug's id in that run. */
    bug: z.number().int().nonnegative().optional(),
    /** What the bug is (kind/name): a try that finds it again reproduced it. */
    finding: z.object({ kind: z.string(), name: z.string() }).strict(),
    /** A shrink's candidate schedule (0 is the bug's own), as `bugs/<id>/shrink/<candidate>.jsonl`. */
    candidate: z.number().int().nonnegative().optional(),
    /** The try's index among the tries of its replay or candidate, from 0. */
    try: z.number().int().nonnegative(),
  })
  .strict();
export type ReplayOf = z.infer<typeof ReplayOfSchema>;

/** What a stored run's configuration says it is a try of; undefined for a campaign (or an older run). */
export function replayOfConfig(config: Readonly<Record<string, unknown>>): ReplayOf | undefined {
  const parsed = ReplayOfSchema.safeParse(config.replayOf);
  return parsed.success ? parsed.data : undefined;
}
