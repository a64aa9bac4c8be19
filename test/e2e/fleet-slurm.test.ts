import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { fencedBlocks } from '../_helpers/markdown.js';
import { type ArrayTask, commandOf, type Slurm, slurmUnavailable, useSlurm } from '../_helpers/slurm.js';
import {
  BIN,
  processesMentioning,
  REPO,
  registryFiles,
  type Sandbox,
  waitFor,
  useSandboxes,
} from './helpers.js';
import { type FleetRecord, recordOf } from './fleet-helpers.js';

/**
 * docs/fleet.md's Slurm recipe run on a real Slurm: Debian's slurmctld, slurmd and munge, a
 * single-node cluster of the test's own on loopback. Its blocks marked `sh slurm=plan`,
 * `slurm=submit` and `slurm=report` are the commands run here, as written, with the batch script
 * examples/slurm/mallory-array.sbatch: what a reader runs is what CI runs.
 */
const unavailable = slurmUnavailable();
const fixture = useSlurm();

const DOC = readFileSync(join(REPO, 'docs', 'fleet.md'), 'utf8');
const SCRIPT = join(REPO, 'examples', 'slurm', 'mallory-array.sbatch');
function recipe(step: 'plan' | 'submit' | 'report'): string {
  const block = fencedBlocks(DOC).find((b) => b.info === `sh slurm=${step}`);
  if (block === undefined) throw new Error(`docs/fleet.md has no block marked \`sh slurm=${step}\``);
  return block.body;
}
/** The plan the recipe makes, under its store: `--id NAME` of its plan block. */
const PLAN_ID = /--id (\S+)/.exec(recipe('plan'))?.[1] ?? 'the plan block names no --id';
const CAMPAIGNS = 4;
/** Four campaigns of seconds each, two at a time on two CPUs: well under this on a loaded machine. */
const ARRAY_TIMEOUT_MS = 240_000;
const SUBMITTED = /Submitted batch job (\d+)/;
const POLL_MS = 200;

interface Shell {
  readonly code: number | null;
  readonly output: string;
}

/** A reader's shell: `mallory` on the PATH, STORE set, SLURM_CONF naming the test's cluster. */
interface Reader {
  readonly box: Sandbox;
  readonly cwd: string;
  readonly plan: string;
  run(step: 'plan' | 'submit' | 'report'): Promise<Shell>;
  /** Submits the array (the recipe's `sbatch` line); its job id. */
  submit(): Promise<number>;
}

function reader(slurm: Slurm, box: Sandbox): Reader {
  const root = dirname(box.store);
  const cwd = join(root, 'work');
  const bin = join(root, 'bin');
  mkdirSync(cwd, { recursive: true });
  mkdirSync(bin, { recursive: true });
  copyFileSync(SCRIPT, join(cwd, 'mallory-array.sbatch'));
  // `mallory` as an installed one would be: this checkout's built command on the system's node.
  writeFileSync(join(bin, 'mallory'), `#!/bin/sh\nexec '${process.execPath}' '${BIN}' "$@"\n`, {
    mode: 0o755,
  });
  const env = slurm.env({ ...box.env, STORE: box.store, PATH: `${bin}:${process.env.PATH ?? ''}` });
  const run = (step: 'plan' | 'submit' | 'report'): Promise<Shell> =>
    new Promise((resolve) => {
      const child = spawn('bash', ['-c', `set -euo pipefail\n${recipe(step)}`], { cwd, env });
      let output = '';
      child.stdout.on('data', (d: Buffer) => (output += d.toString()));
      child.stderr.on('data', (d: Buffer) => (output += d.toString()));
      child.on('close', (code) => {
        resolve({ code, output });
      });
    });
  return {
    box,
    cwd,
    plan: join(box.store, 'plans', PLAN_ID, 'plan.json'),
    run,
    async submit() {
      const submitted = await run('submit');
      expect(submitted.code, submitted.output).toBe(0);
      const id = SUBMITTED.exec(submitted.output)?.[1];
      expect(id, submitted.output).toBeDefined();
      return Number(id);
    },
  };
}

/** What task `task` of job `job` printed (`--output=…/logs/slurm-%A_%a.out`). */
function taskOutput(plan: string, job: number, task: number): string {
  return readFileSync(join(dirname(plan), 'logs', `slurm-${job}_${task}.out`), 'utf8');
}

function records(plan: string): FleetRecord[] {
  return Array.from({ length: CAMPAIGNS }, (_, i) => recordOf(plan, i)!);
}

function runDirs(box: Sandbox): string[] {
  const dir = join(box.store, 'kvraft');
  return existsSync(dir) ? readdirSync(dir).filter((d) => /^\d{8}T/.test(d)) : [];
}

/** What every task of the job printed, for a failed assertion's message. */
function outputs(plan: string, job: number): string {
  return Array.from({ length: CAMPAIGNS }, (_, i) => {
    const file = join(dirname(plan), 'logs', `slurm-${job}_${i}.out`);
    const text = existsSync(file) ? readFileSync(file, 'utf8').split('\n').slice(-15).join('\n') : '(none)';
    return `--- task ${i}:\n${text}`;
  }).join('\n');
}

/** Until campaign 0's run dir is made; fails at once if task 0 of the job ends before that. */
async function waitForRunOrEnd(slurm: Slurm, plan: string, job: number): Promise<void> {
  const deadline = Date.now() + ARRAY_TIMEOUT_MS;
  while (recordOf(plan, 0)?.runDir === undefined) {
    const queued = await slurm.client(['squeue', '-h', '-j', `${job}_0`, '-o', '%T']);
    if (queued.code === 0 && queued.stdout.trim() === '' && recordOf(plan, 0)?.runDir === undefined) {
      throw new Error(`task 0 ended before its campaign started:\n${outputs(plan, job)}`);
    }
    if (Date.now() > deadline) throw new Error(`campaign 0 not started in ${ARRAY_TIMEOUT_MS} ms`);
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

const completed = (task: number): ArrayTask => ({ task, state: 'COMPLETED', exitCode: 0, signal: 0 });

describe.skipIf(unavailable !== undefined)(
  `a plan as a Slurm job array (a private slurmctld, slurmd and munged)${unavailable ? ` (skipped: ${unavailable})` : ''}`,
  () => {
    const newSandbox = useSandboxes();
    const newReader = (): Reader => {
      const box = newSandbox();
      return reader(fixture.slurm, box);
    };
    /** Nothing of the array left: no task's process, no worker, no run's resources. */
    const expectNothingLeft = async (r: Reader): Promise<void> => {
      await waitFor(() => fixture.slurm.leftovers().length === 0, 30_000).catch(() => undefined);
      expect(fixture.slurm.leftovers().map((pid) => `${pid} ${commandOf(pid)}`)).toEqual([]);
      expect(processesMentioning(r.plan)).toEqual([]);
      expect(registryFiles(r.box)).toEqual([]);
    };

    it('runs the four campaigns of a plan as a job array to the end; fleet report merges all four', async () => {
      const r = newReader();
      const planned = await r.run('plan');
      expect(planned.code, planned.output).toBe(0);
      expect(existsSync(r.plan)).toBe(true);
      expect(planned.output).toContain(`sbatch --array=0-${CAMPAIGNS - 1} mallory-array.sbatch ${r.plan}`);

      const job = await r.submit();
      const tasks = await fixture.slurm.waitForJob(job, ARRAY_TIMEOUT_MS);
      expect(tasks, outputs(r.plan, job)).toEqual([0, 1, 2, 3].map(completed));
      const done = records(r.plan);
      for (const [i, record] of done.entries()) {
        expect(record).toMatchObject({ index: i, status: 'done', attempt: 1 });
        expect(taskOutput(r.plan, job, i)).toContain(`campaign ${i} done`);
      }
      // The node's two CPUs ran two tasks at once: some two campaigns overlapped.
      const spans = done.map((d) => {
        const { startedAt, endedAt } = d as FleetRecord & { startedAt: string; endedAt: string };
        return [Date.parse(startedAt), Date.parse(endedAt)] as const;
      });
      expect(spans.some(([s1, e1], i) => spans.some(([s2], j) => j !== i && s2 >= s1 && s2 < e1))).toBe(true);
      expect(runDirs(r.box)).toHaveLength(CAMPAIGNS);

      const reported = await r.run('report');
      expect(reported.code, reported.output).toBe(0);
      expect(reported.output).toContain(`fleet ${PLAN_ID}: 4 campaigns: 4 done`);
      const results = JSON.parse(readFileSync(join(dirname(r.plan), 'report', 'results.json'), 'utf8')) as {
        status: { counts: Record<string, number> };
        groups: { comparison: { policies: Record<string, { runs: { runDir: string }[] }> } }[];
      };
      expect(results.status.counts.done).toBe(CAMPAIGNS);
      const reportedRuns = Object.values(results.groups[0].comparison.policies).flatMap((p) =>
        p.runs.map((run) => run.runDir),
      );
      expect(new Set(reportedRuns)).toEqual(new Set(done.map((d) => d.runDir)));
      expect(existsSync(join(dirname(r.plan), 'report', 'report.html'))).toBe(true);
      await expectNothingLeft(r);
    });

    it(
      'a task cancelled mid-campaign: the same sbatch again runs it to the end and skips the done ones',
      async () => {
        const r = newReader();
        const planned = await r.run('plan');
        expect(planned.code, planned.output).toBe(0);

        const first = await r.submit();
        // Task 0's campaign under way (its run dir made), then cancelled as a user would.
        await waitForRunOrEnd(fixture.slurm, r.plan, first);
        const cancelledRun = recordOf(r.plan, 0)!.runDir!;
        const cancel = await fixture.slurm.client(['scancel', `${first}_0`]);
        expect(cancel.code, cancel.stderr).toBe(0);
        const firstTasks = await fixture.slurm.waitForJob(first, ARRAY_TIMEOUT_MS);
        expect(firstTasks[0].state, outputs(r.plan, first)).toBe('CANCELLED');
        expect(firstTasks.slice(1), outputs(r.plan, first)).toEqual([1, 2, 3].map(completed));
        expect(recordOf(r.plan, 0)).toMatchObject({
          status: 'interrupted',
          attempt: 1,
          runDir: cancelledRun,
        });
        const doneBefore = records(r.plan).slice(1);
        for (const record of doneBefore) expect(record).toMatchObject({ status: 'done', attempt: 1 });
        // The cancelled worker stopped its campaign and removed what it made before Slurm's SIGKILL.
        await expectNothingLeft(r);

        const again = await r.submit();
        const tasks = await fixture.slurm.waitForJob(again, ARRAY_TIMEOUT_MS);
        expect(tasks, outputs(r.plan, again)).toEqual([0, 1, 2, 3].map(completed));
        expect(recordOf(r.plan, 0)).toMatchObject({ status: 'done', attempt: 2, replaced: [cancelledRun] });
        expect(existsSync(cancelledRun)).toBe(false);
        expect(taskOutput(r.plan, again, 0)).toContain('campaign 0 done');
        // The three done campaigns were not run again: their records as they were, their tasks said so.
        expect(records(r.plan).slice(1)).toEqual(doneBefore);
        for (const i of [1, 2, 3]) {
          expect(taskOutput(r.plan, again, i)).toMatch(
            new RegExp(`campaign ${i} \\(.*\\) finished before, in .*: not run again`),
          );
        }
        expect(runDirs(r.box)).toHaveLength(CAMPAIGNS);

        const reported = await r.run('report');
        expect(reported.code, reported.output).toBe(0);
        expect(reported.output).toContain(`fleet ${PLAN_ID}: 4 campaigns: 4 done`);
        await expectNothingLeft(r);
      },
      2 * ARRAY_TIMEOUT_MS,
    );
  },
);
