import { readFileSync } from 'node:fs';

import { z } from 'zod';

import { DURABILITIES, type Durability } from '../check/durability.js';
import { HOST_KEY_CHECKING } from '../cluster/runtime/known-hosts.js';
import { UsageError } from '../core/errors.js';
import { FAULT_KINDS, type FaultKind, PARTITION_SHAPES, TARGETS } from '../core/fault.js';
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
 * - `leader` (bug records): who led just before the fault; when another node leads at replay, the
 *   two names swap in `nodes`, `links` and `groups`, so the fault meets the same roles.
 */
const TriggerSchema = z.object({
  type: z.string().min(1),
  node: z.string().optional(),
  attrs: z.record(z.union([z.string(), z.number()])).optional(),
  withinMs: z.number().finite().positive().optional(),
});
export type Trigger = z.infer<typeof TriggerSchema>;

const ROLE = /^(leader|follower|node|attrs\..+)$/;

const BaseSchema = z.object({
  atMs: z.number().finite().nonnegative().default(0),
  on: TriggerSchema.optional(),
  delayMs: z.number().finite().nonnegative().optional(),
});

const PCT = z.number().min(0).max(100);

/** A fault's parameters when its `value` is an object (`PacketParams`, `ClockParams`, …). */
const ParamsSchema = z
  .object({
    delayMs: z.number().finite().nonnegative(),
    lossPct: PCT,
    dupPct: PCT,
    deltaMs: z.number().finite(),
    rate: z.number().finite().positive(),
    periodMs: z.number().finite().positive(),
    seed: z.number().int().nonnegative(),
  })
  .partial()
  .passthrough();

const FaultSchema = BaseSchema.extend({
  f: z.enum(FAULT_KINDS),
  value: z.unknown().optional(),
  nodes: z.array(z.string()).optional(),
  links: z.array(z.tuple([z.string(), z.string()])).optional(),
  groups: z.array(z.array(z.string()).min(1)).min(2).optional(),
  /** The leader just before the fault, when recorded (bug records): a replay aims at the same roles. */
  leader: z.string().optional(),
  /** How the fault went when it was recorded (bug records); a replay tries it again all the same. */
  outcome: z.enum(['ok', 'skipped', 'error']).optional(),
  error: z.string().optional(),
}).strict();

/** Where a run's nodes ran over SSH, as its bug records keep it (the run's host settings). */
const HostsHeaderSchema = z
  .object({
    hosts: z
      .array(
        z
          .object({
            host: z.string().min(1),
            port: z.number().int().positive().optional(),
            username: z.string().min(1).optional(),
            privateKey: z.string().min(1).optional(),
          })
          .strict(),
      )
      .min(1),
    sshUsername: z.string().min(1),
    sshPort: z.number().int().positive(),
    sshPrivateKey: z.string().min(1).optional(),
    strictHostKeyChecking: z.enum(HOST_KEY_CHECKING),
    knownHosts: z.string().min(1).optional(),
  })
  .strict();
export type HostsHeader = z.infer<typeof HostsHeaderSchema>;

/**
 * The first line of a bug's `schedule.jsonl`: what a replay needs to run it again from the bug
 * directory alone — `{"mallory": {...}}`.
 */
/** A bug's own schedule in its directory: its header, then every fault its schedule tried. */
export const BUG_SCHEDULE_FILE = 'schedule.jsonl';

const ScheduleHeaderSchema = z
  .object({
    system: z.string().min(1),
    nodes: z.number().int().min(1),
    seed: z.number().int().nonnegative(),
    bugs: z.array(z.string()),
    /** The system's settings of the run (`--set`), defaults included. */
    settings: z.record(z.string()).optional(),
    /** The durability contract the run was told to check (`--durability`), when it was. */
    durability: z.enum(DURABILITIES as [Durability, ...Durability[]]).optional(),
    workload: z.string(),
    concurrency: z.number().int().positive().optional(),
    rate: z.number().positive(),
    steps: z.number().int().positive(),
    stepMs: z.number().int().positive(),
    network: z.enum(['auto', 'proxy', 'netns']),
    /** How long the workload ran before the first fault (`--warmup`, or the recovery contract's). */
    warmupMs: z.number().int().positive().optional(),
    /** The schedule of its run the bug was found in (0-based). */
    schedule: z.number().int().nonnegative(),
    finding: z.object({ kind: z.string(), name: z.string() }),
    /**
     * The checkpoint of the schedule's start (every node's data dir), relative to the file's own
     * dir: a replay starts the nodes from it. Absent when the run took none.
     */
    checkpoint: z.string().optional(),
    /**
     * The SSH hosts the run's nodes ran on (`--hosts` and the flags that go with it, paths
     * absolute): a replay runs on them again. Absent: the nodes ran on the fuzzer's machine.
     */
    hosts: HostsHeaderSchema.optional(),
    /**
     * The run was simulated (`--sim`): the world's seed (the run's), its disks' storage contract and
     * its cuts' semantics. A replay runs the schedule in a world of the same seed: the same every time.
     */
    simulated: z
      .object({
        seed: z.number().int().nonnegative(),
        contract: z.enum(['C1', 'C2', 'C3']),
        partitions: z.enum(['proxy', 'netns']),
      })
      .strict()
      .optional(),
    /**
     * A simulated run's configuration as it ran (its store left out), when its policy chose every
     * schedule: a replay of a bug of a later schedule re-runs the schedules before it (the world is
     * deterministic, so they are the same again), then the bug's.
     */
    campaign: z.record(z.string(), z.unknown()).optional(),
    /**
     * The modules the run loaded from files (`--system`, `--workload`): path, content hash and the
     * bug's copy (relative to its dir), so a replay runs the same code or says it cannot.
     */
    plugins: z
      .array(
        z
          .object({
            flag: z.enum(['system', 'workload']),
            path: z.string().min(1),
            sha256: z.string().regex(/^[0-9a-f]{64}$/),
            copy: z.string().min(1),
          })
          .strict(),
      )
      .optional(),
  })
  .strict();
export type ScheduleHeader = z.infer<typeof ScheduleHeaderSchema>;

/**
 * A fault as a bug record keeps it: errored and skipped ones marked, not dropped. A fault a trigger
 * fired keeps its trigger (`on`, `delayMs`) and its targets as written (`$E`, `groups`), after
 * the triggered `let` that binds them.
 */
export interface RecordedFault extends ScheduleEntry {
  readonly outcome?: 'skipped' | 'error';
  readonly error?: string;
  readonly on?: Trigger;
  readonly delayMs?: number;
  readonly groups?: readonly (readonly string[])[];
}

/** A line of a bug's schedule: a fault tried, or the triggered `let` one needs. */
export type RecordedLine = RecordedFault | LetItem;

/** A bug's `schedule.jsonl`: its header line, then every fault tried, in order. */
export function formatBugSchedule(header: ScheduleHeader, faults: readonly RecordedLine[]): string {
  return [{ mallory: header }, ...faults].map((line) => JSON.stringify(line)).join('\n') + '\n';
}

function isHeaderLine(json: unknown): boolean {
  return typeof json === 'object' && json !== null && 'mallory' in json;
}

/** The header of a bug's schedule file, or undefined when it has none (a hand-written schedule). */
export function readScheduleHeader(file: string): ScheduleHeader | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
  const first = text.split('\n').find((l) => l.trim() !== '' && !l.trim().startsWith('#'));
  if (first === undefined) return undefined;
  let json: unknown;
  try {
    json = JSON.parse(first);
  } catch {
    return undefined;
  }
  if (!isHeaderLine(json)) return undefined;
  const parsed = ScheduleHeaderSchema.safeParse((json as { mallory: unknown }).mallory);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new UsageError('schedule', `${file}:1: mallory.${issue.path.join('.')}: ${issue.message}`);
  }
  return parsed.data;
}

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

/**
 * Reads a fault schedule (see above); items come back in time order. Given the run's `nodes`,
 * every node a line names must be one of them, so a schedule fails whole before the cluster starts
 * rather than line by line when each is reached.
 */
export function readSchedule(file: string, nodes?: readonly string[]): ScheduleItem[] {
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
    if (isHeaderLine(json)) return; // a bug record's header: read by readScheduleHeader
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
      const problem = faultProblem(e, nodes);
      if (problem !== undefined) throw new UsageError('schedule', `${file}:${i + 1}: ${problem}`);
      // How it went when recorded is for the reader; a replay tries the fault again all the same.
      items.push(
        onlyDefined({
          ...e,
          outcome: undefined,
          error: undefined,
          value: (e.value ?? null) as ScheduleEntry['value'],
        }) as FaultItem,
      );
    }
  });
  return items.sort((a, b) => a.atMs - b.atMs);
}

function valueTargetNodes(value: unknown): string[] {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return [];
  const target = (value as { target?: unknown }).target;
  return Array.isArray(target) ? target.filter((v): v is string => typeof v === 'string') : [];
}

/** Faults whose `value` may be a string other than a target, and what it may be. */
const STRING_VALUES: Partial<Record<FaultKind, readonly string[]>> = {
  'start-partition': [...PARTITION_SHAPES, 'leader'],
};
/** Faults that ignore their `value`. */
const NO_VALUE: readonly FaultKind[] = ['stop-partition', 'stop-packet', 'heal-all'];

/**
 * `value: problem` when a line's value is a word its fault does not know (`"kill", "value": "n9"`
 * would otherwise fail only when the line is reached, and the run still pass).
 */
function targetProblem(e: z.infer<typeof FaultSchema>): string | undefined {
  if (NO_VALUE.includes(e.f)) return undefined;
  const words = STRING_VALUES[e.f] ?? TARGETS;
  const hint = (word: string, field: string): string =>
    `${field}: ${e.f} takes ${words.join(', ')} or a list of nodes, not "${word}"` +
    (/^n\d+$/.test(word) ? `; to name a node write "nodes": ["${word}"]` : '');
  if (typeof e.value === 'string' && !words.includes(e.value)) return hint(e.value, 'value');
  if (typeof e.value === 'object' && e.value !== null && !Array.isArray(e.value)) {
    const target = (e.value as { target?: unknown }).target;
    if (typeof target === 'string' && !(TARGETS as readonly string[]).includes(target)) {
      return `value.target: ${e.f} takes ${TARGETS.join(', ')} or a list of nodes, not "${target}"`;
    }
  }
  return undefined;
}

/** `field: problem` for a fault line's parameters or node names, or undefined when it has none. */
function faultProblem(
  e: z.infer<typeof FaultSchema>,
  nodes: readonly string[] | undefined,
): string | undefined {
  if (typeof e.value === 'object' && e.value !== null && !Array.isArray(e.value)) {
    const parsed = ParamsSchema.safeParse(e.value);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      return `value.${issue.path.join('.')}: ${issue.message}`;
    }
  }
  const valueProblem = targetProblem(e);
  if (valueProblem !== undefined) return valueProblem;
  if (e.groups) {
    const seen = new Set<string>();
    for (const name of e.groups.flat()) {
      if (name !== '*' && seen.has(name))
        return `groups: ${name} is named twice; each node belongs to one group`;
      seen.add(name);
    }
    if (e.groups.filter((g) => g.includes('*')).length > 1) {
      return 'groups: * is in two groups; it stands for the nodes no other group names, so put it in one';
    }
  }
  if (nodes === undefined) return undefined;
  if (e.groups?.some((g) => g.includes('*'))) {
    const named = new Set(e.groups.flat());
    if (nodes.every((n) => named.has(n))) {
      return `groups: * stands for no node here (the other groups name all of ${nodes.join(', ')}): drop it`;
    }
  }
  const named: [string, readonly string[]][] = [
    ['nodes', (e.nodes ?? []).map((n) => n.replace(/^!/, ''))],
    ['links', (e.links ?? []).flat()],
    ['groups', (e.groups ?? []).flat()],
    ['value', Array.isArray(e.value) ? e.value.filter((v): v is string => typeof v === 'string') : []],
    ['value.target', valueTargetNodes(e.value)],
    ['leader', e.leader !== undefined ? [e.leader] : []],
  ];
  for (const [field, names] of named) {
    const unknown = names.find((n) => n !== '*' && !n.startsWith('$') && !nodes.includes(n));
    if (unknown !== undefined)
      return `${field}: no node ${unknown} in this run (its nodes are ${nodes.join(', ')})`;
  }
  return undefined;
}
