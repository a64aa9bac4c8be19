import { readFileSync } from 'node:fs';

import { z } from 'zod';

import { UsageError } from '../core/errors.js';
import { FAULT_KINDS } from '../core/fault.js';
import type { ScheduleEntry } from '../nemesis/nemesis.js';

const EntrySchema = z.object({
  atMs: z.number().nonnegative(),
  f: z.enum(FAULT_KINDS),
  value: z.unknown().optional(),
  nodes: z.array(z.string()).optional(),
  links: z.array(z.tuple([z.string(), z.string()])).optional(),
});

/** Reads a fault schedule: JSON lines `{atMs, f, value}` (blank lines and `#` comments allowed). */
export function readSchedule(file: string): ScheduleEntry[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    throw new UsageError('schedule', `cannot read schedule file ${file}`);
  }
  const entries: ScheduleEntry[] = [];
  text.split('\n').forEach((raw, i) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    let json: unknown;
    try {
      json = JSON.parse(line);
    } catch {
      throw new UsageError(
        'schedule',
        `${file}:${i + 1}: not JSON — each line is {"atMs": N, "f": "kill", "value": "leader"}`,
      );
    }
    const parsed = EntrySchema.safeParse(json);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new UsageError(
        'schedule',
        `${file}:${i + 1}: ${issue.path.join('.') || 'entry'}: ${issue.message}`,
      );
    }
    const e = parsed.data;
    entries.push({
      atMs: e.atMs,
      f: e.f,
      value: (e.value ?? null) as ScheduleEntry['value'],
      ...(e.nodes ? { nodes: e.nodes } : {}),
      ...(e.links ? { links: e.links } : {}),
    });
  });
  return entries.sort((a, b) => a.atMs - b.atMs);
}
