import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

import { describe, expect, it } from 'vitest';

import { fencedBlocks } from '../_helpers/markdown.js';

const REPO = resolve(import.meta.dirname, '..', '..');
const blocks = fencedBlocks(readFileSync(join(REPO, 'docs', 'fleet.md'), 'utf8'));

/**
 * docs/fleet.md's Slurm recipe: its batch script is examples/slurm/mallory-array.sbatch as the
 * checkout has it, and its blocks marked `sh slurm=…` are what test/e2e/fleet-slurm.test.ts runs
 * on a real Slurm.
 */
describe('docs/fleet.md, the Slurm recipe', () => {
  const step = (name: string): string => {
    const found = blocks.filter((b) => b.info === `sh slurm=${name}`);
    expect(found, `one block marked sh slurm=${name}`).toHaveLength(1);
    return found[0].body;
  };

  it('shows the batch script exactly as examples/slurm/ has it', () => {
    const shown = blocks.filter((b) => b.info === 'sh file=mallory-array.sbatch');
    expect(shown).toHaveLength(1);
    expect(shown[0].body).toBe(readFileSync(join(REPO, 'examples', 'slurm', 'mallory-array.sbatch'), 'utf8'));
    expect(shown[0].body).toMatch(/^exec mallory run --plan "\$1"$/m);
  });

  it('submits one array task per campaign of the plan it makes, and reports on that plan', () => {
    const plan = step('plan');
    const policies = /--policies (\S+)/.exec(plan)![1].split(',').length;
    const seeds = Number(/--seeds (\d+)/.exec(plan)![1]);
    const id = /--id (\S+)/.exec(plan)![1];
    const file = `"$STORE/plans/${id}/plan.json"`;
    const submit = step('submit');
    expect(submit).toMatch(
      new RegExp(
        `^sbatch --array=0-${policies * seeds - 1} .* mallory-array\\.sbatch ${file.replace(/\$/g, '\\$')}$`,
        'm',
      ),
    );
    const report = step('report');
    expect(report).toContain(`mallory fleet report ${file}`);
  });
});
