import { resolve } from 'node:path';

import { describe, expect, it } from 'vitest';

import { moduleDir, refusalOf } from '../_helpers/module-dir.js';

import { defaultCheckers } from '../../src/campaign/checkers.js';
import { RunConfigSchema } from '../../src/campaign/config.js';
import { UsageError } from '../../src/core/errors.js';
import type { Op } from '../../src/core/op.js';
import { Rng } from '../../src/core/random.js';
import type {
  ClientResult,
  ClusterView,
  CounterCapability,
  SystemAdapter,
} from '../../src/systems/system.js';
import { History } from '../../src/workload/history.js';
import { loadWorkload, type LoadedWorkload } from '../../src/workload/load-workload.js';
import { BUILTIN_WORKLOADS } from '../../src/workload/registry.js';

const EXAMPLE = 'examples/workloads/monotonic-counter.ts';

const { write, at } = moduleDir('mallory-load-workload-');
const loadError = (spec: string): Promise<UsageError> => refusalOf(loadWorkload, spec);

/**
 * Counters in memory. `stale`: after the first few adds, every other read answers the count
 * as it was after the third add — a replica that stopped following.
 */
function counters(stale = false): CounterCapability {
  const counts = new Map<string, number>();
  const frozen = new Map<string, number>();
  let reads = 0;
  return {
    client: () => ({
      add(key: string, delta: number): Promise<ClientResult> {
        counts.set(key, (counts.get(key) ?? 0) + delta);
        if ((counts.get(key) ?? 0) >= 3 && !frozen.has(key)) frozen.set(key, counts.get(key)!);
        return Promise.resolve({ type: 'ok' });
      },
      read(key: string): Promise<ClientResult> {
        const lagging = stale && reads++ % 2 === 0 && frozen.has(key);
        return Promise.resolve({ type: 'ok', value: (lagging ? frozen : counts).get(key) ?? null });
      },
      close: () => Promise.resolve(),
    }),
  };
}

function system(parts: Partial<SystemAdapter>): SystemAdapter {
  return { name: 'fake', ...parts } as SystemAdapter;
}

const cluster = { nodes: ['n1', 'n2'] } as unknown as ClusterView;

/** Completed ops a run waits for: enough reads on each side of a stale replica's freeze. */
const MIN_OK_OPS = 60;
const RUN_DEADLINE_MS = 10_000;

/**
 * Runs a loaded workload until it has completed MIN_OK_OPS ops (a loaded machine runs its workers
 * slower: a wait for a condition, not a clock), then its final reads, and returns its history.
 */
async function run(loaded: LoadedWorkload, of: SystemAdapter): Promise<Op[]> {
  const ops: Op[] = [];
  const workload = loaded.definition.create({
    system: of,
    cluster,
    history: new History(0, (op) => ops.push(op)),
    rng: new Rng(4),
    concurrency: 3,
    rate: 500,
    timeoutMs: 200,
  });
  workload.start('s0');
  const deadline = Date.now() + RUN_DEADLINE_MS;
  while (ops.filter((op) => op.type === 'ok').length < MIN_OK_OPS && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 10));
  }
  await workload.stop();
  await workload.finalReads(1000);
  return ops;
}

/** The findings of the run's history checker (the first of the default checkers) on `ops`. */
async function findings(loaded: LoadedWorkload, ops: readonly Op[]): Promise<readonly unknown[]> {
  const [historyChecker] = defaultCheckers(RunConfigSchema.parse({ workload: loaded.source }), loaded);
  return historyChecker.check({
    schedule: 0,
    ops,
    faults: [],
    events: [],
    runDir: '/nowhere',
    system: system({}),
    nodeCount: 3,
  });
}

const DEFINITION = `{
  name: 'fixed',
  unsupported: () => undefined,
  create: () => ({ counts: { ok: 0, fail: 0, info: 0 }, start() {}, stop: async () => {}, interrupt() {}, finalReads: async () => 0 }),
  check: (history) => globalThis.VERDICT ?? { valid: true },
}`;

describe('loadWorkload', () => {
  it('gives a built-in by name, recorded by name, checked by the built-in checker', async () => {
    const loaded = await loadWorkload('counter');
    expect(loaded.definition).toBe(BUILTIN_WORKLOADS.counter);
    expect(loaded).toMatchObject({ source: 'counter', builtIn: true });
    const [checker] = defaultCheckers(RunConfigSchema.parse({ workload: 'counter' }), loaded);
    expect(checker.name).toBe('counter');
  });

  it('loads the example from its .ts file, recorded by absolute path; its ops go into the history', async () => {
    const loaded = await loadWorkload(EXAMPLE);
    expect(loaded).toMatchObject({ source: resolve(EXAMPLE), builtIn: false });
    expect(loaded.definition.name).toBe('monotonic-counter');
    const ops = await run(loaded, system({ counters: counters() }));
    expect(new Set(ops.map((op) => op.f))).toEqual(new Set(['add', 'read']));
    expect(new Set(ops.map((op) => op.type))).toEqual(new Set(['invoke', 'ok']));
    expect(ops.every((op) => /^s0-m\d$/.test((op.value as [string, unknown])[0]))).toBe(true);
    expect(await findings(loaded, ops)).toEqual([]);
  });

  it("runs the workload's own checker as the run's history checker: a read that went down is a bug", async () => {
    const loaded = await loadWorkload(EXAMPLE);
    const ops = await run(loaded, system({ counters: counters(true) }));
    const [finding] = (await findings(loaded, ops)) as { kind: string; name: string; message: string }[];
    expect(finding).toMatchObject({ kind: 'workload', name: 'read-went-down' });
    expect(finding.message).toMatch(
      /^\d+ of \d+ counter reads went down: counter "s0-m\d": process \d+'s read \(op \d+, ok at op \d+ on n\d\) saw \d+, but process \d+'s read/,
    );
  });

  it("turns the checker's verdicts into findings: false a bug named by it or the workload, 'unknown' a note", async () => {
    const loaded = await loadWorkload(write('verdicts.mjs', `export default ${DEFINITION};\n`));
    const g = globalThis as { VERDICT?: unknown };
    g.VERDICT = { valid: false, message: 'no good', evidence: { n: 1 } };
    expect(await findings(loaded, [])).toEqual([
      { kind: 'workload', name: 'fixed', message: 'no good', evidence: { n: 1 } },
    ]);
    g.VERDICT = { valid: 'unknown', message: 'too long' };
    expect(await findings(loaded, [])).toEqual([
      {
        kind: 'workload',
        name: 'fixed',
        severity: 'note',
        unknown: true,
        message: 'the check of workload fixed could not tell: too long',
        evidence: null,
      },
    ]);
    g.VERDICT = 42;
    await expect(findings(loaded, [])).rejects.toThrow(
      "the check of workload fixed returned 42, not a verdict {valid: true | false | 'unknown', message?}",
    );
    delete g.VERDICT;
  });

  it('loads the export named workload of a package directory', async () => {
    write('pkg/package.json', '{"type": "module", "main": "lib/main.js"}\n');
    write('pkg/lib/main.js', `export const workload = ${DEFINITION};\n`);
    expect((await loadWorkload(at('pkg'))).definition.name).toBe('fixed');
  });

  it('refuses a missing file in one line', async () => {
    const e = await loadError('./examples/workloads/nope.ts');
    expect(e.message).toBe('--workload ./examples/workloads/nope.ts: no such file or directory');
    expect(e.code).toBe('unknown-workload');
  });

  it('refuses an unknown name, listing the built-ins and saying a path is welcome', async () => {
    const e = await loadError('nope');
    expect(e.message).toMatch(
      /^unknown workload "nope": choose one of [a-z-]+(, [a-z-]+)+, or give the path of a workload module \(\.\/my-workload\.js\)$/,
    );
    expect(e.message).toContain('register');
  });

  it('refuses a module that exports no workload definition', async () => {
    const file = write('nothing.mjs', 'export const answer = 42;\n');
    expect((await loadError(file)).message).toBe(
      `--workload ${file}: the module exports no workload definition: export default (or export const workload) a WorkloadDefinition {name, unsupported, create, check}`,
    );
  });

  it('refuses a definition without its checker, naming the field', async () => {
    const file = write(
      'unchecked.mjs',
      "export default { name: 'x', unsupported: () => undefined, create: () => ({}) };\n",
    );
    expect((await loadError(file)).message).toBe(
      `--workload ${file}: not a workload definition: field "check": must be a function (history, context) => {valid, message}: a workload brings its own checker (see docs/writing-a-workload.md)`,
    );
  });

  it('refuses, when the run creates it, a workload that is not one', async () => {
    const file = write(
      'hollow.mjs',
      "export default { name: 'hollow', unsupported: () => undefined, create: () => ({ counts: { ok: 0, fail: 0, info: 0 } }), check: () => ({ valid: true }) };\n",
    );
    const loaded = await loadWorkload(file);
    await expect(run(loaded, system({}))).rejects.toThrow(
      `--workload ${file}: hollow.create() did not return a workload: field "start": must be a function (see docs/writing-a-workload.md)`,
    );
  });

  it('says in one line why a system cannot run a workload loaded by path (its unsupported answer)', async () => {
    const loaded = await loadWorkload(EXAMPLE);
    expect(loaded.refusal(system({ counters: counters() }))).toBeUndefined();
    expect(loaded.refusal(system({}))).toBe(
      `--workload ${EXAMPLE}: workload monotonic-counter cannot run on system fake, which keeps no counters (a counter client with an atomic add)`,
    );
  });
});
