import { z } from 'zod';

import { UsageError } from '../core/errors.js';
import { loadDefinition, type PluggableKind } from '../core/load-module.js';
import type { SystemAdapter } from '../systems/system.js';
import { BUILTIN_WORKLOADS, workloadRefusal } from './registry.js';
import type { Workload, WorkloadDefinition, WorkloadName } from './workload.js';

/** A workload definition, how a bug record names it so `mallory replay` finds it again, and who may run it. */
export interface LoadedWorkload {
  readonly definition: WorkloadDefinition;
  /** The built-in name, or the absolute path of the module file the definition was loaded from. */
  readonly source: string;
  /** Whether it is one of `BUILTIN_WORKLOADS` (its checker is chosen by its name). */
  readonly builtIn: boolean;
  /** Why `system` cannot run it, in one line that says what to do; undefined when it can. */
  refusal(system: SystemAdapter): string | undefined;
}

const WORKLOAD_KIND: PluggableKind<WorkloadDefinition> = {
  noun: 'workload',
  flag: '--workload',
  builtIns: BUILTIN_WORKLOADS,
  shape: 'WorkloadDefinition {name, unsupported, create, check}',
  keys: ['name', 'unsupported', 'create', 'check'],
  code: 'bad-workload',
};

const isFunction = (v: unknown): boolean => typeof v === 'function';

const DefinitionSchema = z.object({
  name: z.string().min(1, 'must be a non-empty string'),
  unsupported: z.custom(isFunction, 'must be a function (system) => string | undefined'),
  create: z.custom(isFunction, 'must be a function (context) => Workload'),
  check: z.custom(
    isFunction,
    'must be a function (history, context) => {valid, message}: a workload brings its own checker',
  ),
});

const WorkloadSchema = z.object({
  counts: z.object({ ok: z.number(), fail: z.number(), info: z.number() }),
  start: z.custom(isFunction, 'must be a function'),
  stop: z.custom(isFunction, 'must be a function'),
  interrupt: z.custom(isFunction, 'must be a function'),
  finalReads: z.custom(isFunction, 'must be a function'),
});

const GUIDE = '(see docs/writing-a-workload.md)';

/**
 * The workload `--workload` names: a built-in (`register`, `set`, …) or the path of a module that
 * exports a {@link WorkloadDefinition} with its checker — loaded as `--system` loads systems (a
 * `.js`/`.mjs` file, a `.ts` file through tsx, or a package directory; the default export or the
 * export named `workload`). Anything else is a one-line `UsageError`.
 */
export async function loadWorkload(spec: string): Promise<LoadedWorkload> {
  const found = await loadDefinition(spec, WORKLOAD_KIND);
  if (found.builtIn !== undefined) {
    return {
      definition: found.builtIn,
      source: found.source,
      builtIn: true,
      refusal: (system) => workloadRefusal(found.builtIn.name as WorkloadName, system),
    };
  }
  const definition = checkedDefinition(found.exported, spec);
  return {
    definition,
    source: found.source,
    builtIn: false,
    refusal(system) {
      const lacks = definition.unsupported(system);
      return lacks === undefined
        ? undefined
        : `--workload ${spec}: workload ${definition.name} cannot run on system ${system.name}, which ${lacks}`;
    },
  };
}

function firstIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  const field = issue.path.join('.');
  return `field${field ? ` "${field}"` : ''}: ${issue.message}`;
}

/** The definition, validated; its `create` checks the workload it makes, once per run. */
function checkedDefinition(raw: unknown, spec: string): WorkloadDefinition {
  const parsed = DefinitionSchema.safeParse(raw);
  if (!parsed.success) {
    throw new UsageError(
      'bad-workload',
      `--workload ${spec}: not a workload definition: ${firstIssue(parsed.error)} ${GUIDE}`,
    );
  }
  const definition = raw as WorkloadDefinition;
  return {
    name: definition.name,
    unsupported: (system) => definition.unsupported(system),
    ...(definition.check !== undefined ? { check: definition.check } : {}),
    create(context): Workload {
      const workload = definition.create(context);
      const checked = WorkloadSchema.safeParse(workload);
      if (!checked.success) {
        throw new UsageError(
          'bad-workload',
          `--workload ${spec}: ${definition.name}.create() did not return a workload: ${firstIssue(checked.error)} ${GUIDE}`,
        );
      }
      return workload;
    },
  };
}
