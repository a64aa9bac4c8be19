import { existsSync } from 'node:fs';
import { join } from 'node:path';

import { StateClusters } from '../abstraction/clusters.js';
import { renameTemplateIds, templateText } from '../observe/template-ids.js';
import { readStoredSeed } from '../store/run-reader.js';

export interface RunStates {
  /** Per abstraction (`causal`, `artifact`), the feature lists of the run's states, in the order seen. */
  readonly byAbstraction: ReadonlyMap<string, readonly (readonly string[])[]>;
}

/** A run's states with their features named by text (none when the run has no database). */
export function readRunStates(runDir: string): RunStates {
  const byAbstraction = new Map<string, string[][]>();
  if (!existsSync(join(runDir, 'run.db'))) return { byAbstraction };
  const stored = readStoredSeed(runDir, '');
  const textOf = new Map(stored.templates.map((t) => [t.id, templateText(t.tokens)]));
  for (const state of stored.states) {
    const features = (JSON.parse(state.features) as string[]).map((f) => renameTemplateIds(f, textOf));
    const list = byAbstraction.get(state.abstraction) ?? [];
    list.push([...new Set(features)].sort());
    byAbstraction.set(state.abstraction, list);
  }
  return { byAbstraction };
}

/**
 * The distinct states of several runs together, per abstraction: their states re-clustered as one
 * campaign clusters its own (the same similarity rule), with template ids named by text — so a
 * state two workers both reached counts once.
 */
export function unionStates(runDirs: readonly string[]): Record<string, number> {
  const clusters = new Map<string, StateClusters>();
  const ids = new Map<string, Set<string>>();
  for (const dir of runDirs) {
    for (const [abstraction, states] of readRunStates(dir).byAbstraction) {
      let c = clusters.get(abstraction);
      if (c === undefined) {
        c = new StateClusters();
        clusters.set(abstraction, c);
        ids.set(abstraction, new Set());
      }
      for (const features of states) {
        if (features.length > 0) ids.get(abstraction)!.add(c.assign(features));
      }
    }
  }
  return Object.fromEntries([...ids].map(([a, s]) => [a, s.size]));
}
