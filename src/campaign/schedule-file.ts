import { readFileSync } from 'node:fs';

import { z } from 'zod';

import { UsageError } from '../core/errors.js';
import { FAULT_KINDS } from '../core/fault.js';
import type { ScheduleEntry } from '../nemesis/nemesis.js';

/**
 * A fault schedule file (`--schedule`): JSON lines, blank lines and `#` comments allowed.
 *
 * - `{"atMs": 2500, "f": "kill", "value": "leader"}` — a fault at a time after the schedule starts
 *   (bug records write exactly this, with the `nodes` / `links` the fault resolved to).
 * - `{"atMs": 2000, "let": {"L": "leader", "V": "follower"}}` — binds names to nodes at that time:
 *   `leader` (the system's), `follower` (a running member that is not the leader nor bound by the
 *   same line). Names are used as `$L` in `nodes`, `links` and `groups`.
 * - `"on": {"type": "become-leader", "node": "$C", "attrs": {"term": 3}, "withinMs": 3000}` on a
 *   fault or `let` line makes it wait, from `atMs` on, for the first event of that type (probe,
 *   log, network) — then it runs `delayMs` after the event. Lines with the same `atMs` and `on`
 *   share one event. A triggered `let` can bind `node` (the event's node) or `attrs.K`.
 * - `nodes`: node names, `$NAME`, `*` (every node) and `!x` (remove x), e.g. `["*", "!$C"]`.
 * - `groups` (start-partition): node lists; every link between two groups is cut, both ways; a
 *   `*` in a group stands for the nodes no other group names.
 */
const TriggerSchema = z.object({
  type: z.string().min(1),
  node: z.string().optional(),
  attrs: z.record(z.union([z.string(), z.number()])).optional(),
  withinMs: z.number().positive().optional(),
});
export type Trigger = z.infer<typeof TriggerSchema>;

const ROLE = /^(leader|follower|node|attrs\..+)$/;

const BaseSchema = z.object({
  atMs: z.number().nonnegative().default(0),
  on: TriggerSchema.optional(),
  delayMs: z.number().nonnegative().optional(),
});

const FaultSchema = BaseSchema.extend({
  f: z.enum(FAULT_KINDS),
  value: z.unknown().optional(),
  nodes: z.array(z.string()).optional(),
  links: z.array(z.tuple([z.string(), z.string()])).optional(),
  groups: z.array(z.array(z.string()).min(1)).min(2).optional(),
}).strict();

const LetSchema = BaseSchema.extend({
  let: z.record(
    z.string().regex(/^[A-Za-z_]\w*$/),
    z.string().regex(ROLE, 'leader, follower, node or attrs.NAME'),
  ),
}).strict();

/** A fault line; `nodes` and `links` may name variables until the runner resolves them. */
export interface FaultItem extends ScheduleEntry {
  readonly groups?: readonly (readonly string[])[];
  readonly on?: Trigger;
  readonly delayMs?: number;
}

export interface LetItem {
  readonly atMs: number;
  readonly let: Readonly<Record<string, string>>;
  readonly on?: Trigger;
  readonly delayMs?: number;
}

export type ScheduleItem = FaultItem | LetItem;

export function isLet(item: ScheduleItem): item is LetItem {
  return 'let' in item;
}

function onlyDefined<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}

/** Reads a fault schedule (see above); items come back in time order. */
export function readSchedule(file: string): ScheduleItem[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    throw new UsageError('schedule', `cannot read schedule file ${file}`);
  }
  const items: ScheduleItem[] = [];
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
    const isLetLine = typeof json === 'object' && json !== null && 'let' in json;
    const parsed = isLetLine ? LetSchema.safeParse(json) : FaultSchema.safeParse(json);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new UsageError(
        'schedule',
        `${file}:${i + 1}: ${issue.path.join('.') || 'entry'}: ${issue.message}`,
      );
    }
    if (isLetLine) {
      items.push(onlyDefined(parsed.data as LetItem));
    } else {
      const e = parsed.data as z.infer<typeof FaultSchema>;
      if (e.groups && e.f !== 'start-partition') {
        throw new UsageError('schedule', `${file}:${i + 1}: groups: only start-partition takes groups`);
      }
      items.push(onlyDefined({ ...e, value: (e.value ?? null) as ScheduleEntry['value'] }) as FaultItem);
    }
  });
  return items.sort((a, b) => a.atMs - b.atMs);
}
