import { z } from 'zod';

import { DURABILITIES, type Durability } from '../check/durability.js';
import { READ_CONSISTENCIES, type ReadConsistency } from '../check/sequential-reads.js';
import { UsageError } from '../core/errors.js';
import { isModulePath, loadDefinition, type PluggableKind } from '../core/load-module.js';
import { SYSTEMS } from './index.js';
import type { SystemAdapter, SystemDefinition } from './system.js';

/** A system definition and how a bug record names it so `mallory replay` finds it again. */
export interface LoadedSystem {
  readonly definition: SystemDefinition;
  /** The built-in name, or the absolute path of the module file a definition was loaded from. */
  readonly source: string;
}

const MAX_NODES = 9;

const DefinitionSchema = z.object({
  name: z.string().min(1, 'must be a non-empty string'),
  defaultNodes: z.number().int().min(1).max(MAX_NODES),
  bugs: z.array(z.string()),
  settings: z
    .record(
      z
        .object({ values: z.array(z.string()).min(1), default: z.string(), doc: z.string() })
        .refine((s) => s.values.includes(s.default), 'its default must be one of its values'),
    )
    .optional(),
  create: z.custom<SystemDefinition['create']>((v) => typeof v === 'function', 'must be a function'),
});

const AdapterSchema = z.object({
  name: z.string().min(1),
  services: z.array(z.string()).min(1, 'must name at least one service'),
  peerServices: z.array(z.string()),
  leadership: z
    .object({ leader: z.custom((v) => typeof v === 'function', 'must be a function') })
    .passthrough()
    .optional(),
  membership: z
    .object({
      add: z.custom((v) => typeof v === 'function', 'must be a function'),
      remove: z.custom((v) => typeof v === 'function', 'must be a function'),
      quorum: z.boolean().optional(),
    })
    .passthrough()
    .optional(),
  crashPatterns: z.array(z.instanceof(RegExp, { message: 'must be regular expressions' })),
  doctor: z.custom((v) => typeof v === 'function', 'must be a function'),
  launch: z.custom((v) => typeof v === 'function', 'must be a function'),
  ready: z.custom((v) => typeof v === 'function', 'must be a function'),
  client: z.custom((v) => typeof v === 'function', 'must be a function'),
  readConsistency: z.enum(READ_CONSISTENCIES as [ReadConsistency, ...ReadConsistency[]]).optional(),
  durability: z.enum(DURABILITIES as [Durability, ...Durability[]]).optional(),
  failoverLoss: z
    .object({
      events: z.array(z.string().min(1)).min(1, 'must name at least one log event type'),
      why: z.string().min(1),
      splitBrain: z
        .object({
          promoted: z.string().min(1),
          started: z.string().min(1),
          converged: z.array(z.string().min(1)).min(1, 'must name at least one log event type'),
        })
        .optional(),
    })
    .optional(),
  recoveryTimeoutMs: z.number().int().positive().optional(),
  knownIssues: z
    .array(
      z.object({
        id: z.string().min(1),
        url: z.string().min(1).optional(),
        why: z.string().min(1),
        after: z.array(z.string().min(1)).min(1, 'must name at least one fault kind'),
        line: z.instanceof(RegExp, { message: 'must be a RegExp' }),
      }),
    )
    .optional(),
  recoveryExceptions: z
    .array(
      z.object({
        after: z.array(z.string().min(1)).min(1, 'must name at least one fault kind'),
        why: z.string().min(1),
        holds: z.custom((v) => typeof v === 'function', 'must be a function'),
      }),
    )
    .optional(),
});

/** Adapter members an older Mallory read, and what says the same now. */
const RETIRED_FIELDS: readonly (readonly [string, string])[] = [
  ['supportsLeader', 'give `leadership: { leader(cluster) }` instead (none: no leader)'],
  [
    'supportsMembership',
    'give `membership: { add, remove, configuration? }` instead (none: no membership changes)',
  ],
  ['memberAdd', 'it is `membership.add` now'],
  ['memberRemove', 'it is `membership.remove` now'],
];

/** Whether `spec` names a file or directory rather than a built-in system. */
export const isSystemPath = isModulePath;

const SYSTEM_KIND: PluggableKind<SystemDefinition> = {
  noun: 'system',
  flag: '--system',
  builtIns: SYSTEMS,
  shape: 'SystemDefinition {name, defaultNodes, bugs, create}',
  keys: ['name', 'defaultNodes', 'bugs', 'create'],
  code: 'bad-system',
};

/**
 * The system `--system` names: a built-in (`kvraft`, `etcd`, …) or the path of a module that
 * exports a {@link SystemDefinition} — a `.js`/`.mjs` file, a `.ts` file (loaded through tsx), or
 * a directory (its package.json `exports` or `main`, else its `index.js` / `index.ts`). The
 * definition is the module's default export or its export named `system`. Anything else is a
 * one-line `UsageError`.
 */
export async function loadSystem(spec: string): Promise<LoadedSystem> {
  const found = await loadDefinition(spec, SYSTEM_KIND);
  if (found.builtIn !== undefined) return { definition: found.builtIn, source: found.source };
  return { definition: checkedDefinition(found.exported, spec), source: found.source };
}

function firstIssue(error: z.ZodError, what: string): string {
  const issue = error.issues[0];
  const field = issue.path.join('.');
  return `${what}${field ? ` "${field}"` : ''}: ${issue.message}`;
}

/** The definition, validated; its `create` checks the adapter it makes, once per run. */
function checkedDefinition(raw: unknown, spec: string): SystemDefinition {
  const parsed = DefinitionSchema.safeParse(raw);
  if (!parsed.success) {
    throw new UsageError(
      'bad-system',
      `--system ${spec}: not a system definition: ${firstIssue(parsed.error, 'field')} (see docs/writing-a-system.md)`,
    );
  }
  const definition = raw as SystemDefinition;
  return {
    name: definition.name,
    defaultNodes: definition.defaultNodes,
    bugs: definition.bugs,
    ...(definition.settings !== undefined ? { settings: definition.settings } : {}),
    create(options): SystemAdapter {
      const adapter = definition.create(options);
      const retired = RETIRED_FIELDS.find(([field]) => field in (adapter as object));
      if (retired) {
        throw new UsageError(
          'bad-system',
          `--system ${spec}: ${definition.name}.create() returned an adapter with \`${retired[0]}\`, which is gone: ${retired[1]} (see docs/writing-a-system.md)`,
        );
      }
      const checked = AdapterSchema.safeParse(adapter);
      if (!checked.success) {
        throw new UsageError(
          'bad-system',
          `--system ${spec}: ${definition.name}.create() did not return a system adapter: ${firstIssue(checked.error, 'field')} (see docs/writing-a-system.md)`,
        );
      }
      return adapter;
    },
  };
}
