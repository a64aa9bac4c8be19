import { existsSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { parseArm } from '../../src/campaign/compare.js';
import { configFromFlags } from '../../src/cli/run.js';
import { DEFAULT_FAULT_FAMILIES } from '../../src/core/fault.js';
import {
  ALL_GROUP,
  buildPlan,
  campaignConfig,
  defaultPlanFile,
  PLAN_FORMAT,
  type Plan,
  type PlanData,
  planCampaigns,
  readPlan,
  workerIndex,
  writePlan,
} from '../../src/fleet/plan.js';
import { baseConfig, planRequest, tempDir, usageError, writeStorePlan } from './_helpers/plan.js';

const TIMESTAMP_ID = /^kvraft-\d{8}T\d{6}-\d{3}Z$/;

describe('planCampaigns', () => {
  it('interleaves per seed every arm, seeds counting up from the first, indices in order', () => {
    const campaigns = planCampaigns(
      planRequest('/s', { arms: ['adaptive', 'random', 'adaptive+disk'], seeds: 2 }),
    );

    expect(campaigns.map((c) => [c.index, c.group, c.arm, c.seed])).toEqual([
      [0, ALL_GROUP, 'adaptive', 10],
      [1, ALL_GROUP, 'random', 10],
      [2, ALL_GROUP, 'adaptive+disk', 10],
      [3, ALL_GROUP, 'adaptive', 11],
      [4, ALL_GROUP, 'random', 11],
      [5, ALL_GROUP, 'adaptive+disk', 11],
    ]);
  });

  it("sets each campaign's policy, seed and faults (the arm's added), and leaves the store out", () => {
    const campaigns = planCampaigns(planRequest('/s', { arms: ['random', 'adaptive+disk+clock'], seeds: 1 }));

    expect(campaigns[0].config).toMatchObject({
      policy: 'random',
      seed: 10,
      faults: [...DEFAULT_FAULT_FAMILIES],
    });
    expect(campaigns[1].config).toMatchObject({
      policy: 'adaptive',
      seed: 10,
      faults: [...DEFAULT_FAULT_FAMILIES, 'disk', 'clock'],
    });
    expect(campaigns[1].config).toMatchObject({
      system: 'kvraft',
      timeMs: 1000,
      workload: 'register',
      bugs: [],
    });
    expect(campaigns.every((c) => !('store' in c.config))).toBe(true);
  });

  it('adds a family the base already has only once', () => {
    const campaigns = planCampaigns({
      base: baseConfig('/s', { faults: ['disk', 'kill'] }),
      arms: [parseArm('adaptive+disk')],
      seeds: 1,
      seed: 0,
    });

    expect(campaigns[0].config.faults).toEqual(['disk', 'kill']);
  });

  it('makes one group per bug switch, named bug=<name>, each with that bug added to the base bugs', () => {
    const campaigns = planCampaigns({
      base: baseConfig('/s', { bugs: ['slow-apply'] }),
      arms: ['adaptive', 'random'].map(parseArm),
      seeds: 2,
      seed: 3,
      eachBug: ['stale-read', 'slow-apply'],
    });

    expect(campaigns).toHaveLength(2 * 2 * 2);
    expect(campaigns.map((c) => [c.index, c.group, c.arm, c.seed])).toEqual([
      [0, 'bug=stale-read', 'adaptive', 3],
      [1, 'bug=stale-read', 'random', 3],
      [2, 'bug=stale-read', 'adaptive', 4],
      [3, 'bug=stale-read', 'random', 4],
      [4, 'bug=slow-apply', 'adaptive', 3],
      [5, 'bug=slow-apply', 'random', 3],
      [6, 'bug=slow-apply', 'adaptive', 4],
      [7, 'bug=slow-apply', 'random', 4],
    ]);
    expect(campaigns[0].config.bugs).toEqual(['slow-apply', 'stale-read']);
    expect(campaigns[4].config.bugs).toEqual(['slow-apply']);
  });

  it('makes one group of the base bugs when no bug switch is given', () => {
    const campaigns = planCampaigns({ ...planRequest('/s', { seeds: 1 }), eachBug: [] });

    expect(campaigns.map((c) => c.group)).toEqual([ALL_GROUP, ALL_GROUP]);
  });
});

describe('a plan file', () => {
  let store: string;
  let elsewhere: string;
  beforeEach(() => {
    store = tempDir();
    elsewhere = tempDir();
  });
  afterEach(() => {
    rmSync(store, { recursive: true, force: true });
    rmSync(elsewhere, { recursive: true, force: true });
  });

  const writeJson = (file: string, data: unknown): void => {
    writeFileSync(file, JSON.stringify(data));
  };

  it('is built from the base configuration, named after the system and the time unless given an id', () => {
    const data = buildPlan(planRequest(store, { seeds: 3 }), store);

    expect(data).toMatchObject({
      format: PLAN_FORMAT,
      version: 1,
      store,
      system: 'kvraft',
      workload: 'register',
      timeMs: 1000,
      stopOnBug: false,
    });
    expect(data.id).toMatch(TIMESTAMP_ID);
    expect(Number.isNaN(Date.parse(data.created))).toBe(false);
    expect(data.campaigns).toHaveLength(2 * 3);
    expect(buildPlan(planRequest(store, { id: 'nightly' }), store).id).toBe('nightly');
  });

  it('reads back as written, its paths resolved', () => {
    const data = buildPlan(planRequest(store, { id: 'round-trip', eachBug: ['stale-read'] }), store);
    const file = defaultPlanFile(store, data.id);

    const written = writePlan(data, file);
    const read = readPlan(file);

    expect(written).toMatchObject({ file, storeDir: store, dir: join(store, 'plans', 'round-trip') });
    expect(existsSync(written.dir)).toBe(true);
    expect(read).toEqual(written);
    expect(read.campaigns).toEqual(data.campaigns);
  });

  it('inside its store names the store relative to itself, so the store can be mounted anywhere', () => {
    const data = buildPlan(planRequest(store, { id: 'p' }), store);

    writePlan(data, defaultPlanFile(store, 'p'));
    const stored = JSON.parse(readFileSync(defaultPlanFile(store, 'p'), 'utf8')) as PlanData;
    const moved = join(elsewhere, 'mounted');
    renameSync(store, moved);
    const plan = readPlan(defaultPlanFile(moved, 'p'));

    expect(stored.store).toBe(join('..', '..'));
    expect(plan).toMatchObject({ storeDir: moved, dir: join(moved, 'plans', 'p') });
  });

  it('outside its store names the store by its absolute path', () => {
    const file = join(elsewhere, 'plan.json');

    const plan = writePlan(buildPlan(planRequest(store, { id: 'out' }), store), file);
    const stored = JSON.parse(readFileSync(file, 'utf8')) as PlanData;

    expect(stored.store).toBe(store);
    expect(plan.storeDir).toBe(store);
    expect(readPlan(file).dir).toBe(join(store, 'plans', 'out'));
  });

  it.each(['../../escape', 'my plan', '_x'])('with the id %j is refused before anything is written', (id) => {
    const data = buildPlan(planRequest(store, { id }), store);

    const error = usageError(() => writePlan(data, defaultPlanFile(store, id)));

    expect(error.code).toBe('bad-flag');
    expect(error.message).toMatch(new RegExp(`^--id "${id.replace(/[.]/g, '\\.')}": letters, digits`));
    expect(readdirSync(store)).toEqual([]);
  });

  it('is not overwritten: writing it again is refused', () => {
    const data = buildPlan(planRequest(store, { id: 'once' }), store);
    const file = defaultPlanFile(store, 'once');
    writePlan(data, file);
    const before = readFileSync(file, 'utf8');

    const error = usageError(() => writePlan({ ...data, timeMs: 5 }, file));

    expect(error.code).toBe('plan-exists');
    expect(error.message).toContain(file);
    expect(readFileSync(file, 'utf8')).toBe(before);
  });

  it('that does not exist is refused in one line naming it', () => {
    const file = join(elsewhere, 'missing.json');

    const error = usageError(() => readPlan(file));

    expect(error).toMatchObject({ code: 'bad-plan' });
    expect(error.message).toBe(`--plan: ${file} does not exist: write one with \`mallory plan\``);
  });

  it('that is not JSON is refused in one line naming it', () => {
    const file = join(elsewhere, 'plan.json');
    writeFileSync(file, '{"format": "mallory-plan",\n');

    const error = usageError(() => readPlan(file));

    expect(error.code).toBe('bad-plan');
    expect(error.message).toContain(`--plan: ${file} is not JSON (`);
    expect(error.message).not.toContain('\n');
  });

  it('of another schema is refused in one line naming the field', () => {
    const file = join(elsewhere, 'plan.json');
    const data = buildPlan(planRequest(store, { id: 'p' }), store);
    writeJson(file, { ...data, version: 2 });

    const error = usageError(() => readPlan(file));

    expect(error.code).toBe('bad-plan');
    expect(error.message).toContain(`--plan: ${file} is not a plan written by \`mallory plan\`: version: `);
    expect(error.message).not.toContain('\n');
    writeJson(file, [1, 2]);
    expect(usageError(() => readPlan(file)).message).toContain('`mallory plan`: the file: ');
  });

  it('whose campaigns are misnumbered is refused in one line naming the first', () => {
    const file = join(elsewhere, 'plan.json');
    const data = buildPlan(planRequest(store, { id: 'p', seeds: 2 }), store);
    const campaigns = data.campaigns.map((c, i) => (i === 2 ? { ...c, index: 3 } : c));
    writeJson(file, { ...data, campaigns });

    const error = usageError(() => readPlan(file));

    expect(error.code).toBe('bad-plan');
    expect(error.message).toBe(`--plan: ${file}: campaign 2 is numbered 3: indices run 0, 1, 2, …`);
  });
});

describe('workerIndex', () => {
  let store: string;
  let plan: Plan;
  beforeEach(() => {
    store = tempDir();
    plan = writeStorePlan(store, { seeds: 2 });
  });
  afterEach(() => {
    rmSync(store, { recursive: true, force: true });
  });

  it('takes --index, else JOB_COMPLETION_INDEX, else SLURM_ARRAY_TASK_ID', () => {
    expect(workerIndex(plan, '3', {})).toBe(3);
    expect(workerIndex(plan, undefined, { JOB_COMPLETION_INDEX: '2' })).toBe(2);
    expect(workerIndex(plan, undefined, { SLURM_ARRAY_TASK_ID: '1' })).toBe(1);
  });

  it('prefers the flag to the environment, and a Kubernetes index to a Slurm one', () => {
    const env = { JOB_COMPLETION_INDEX: '2', SLURM_ARRAY_TASK_ID: '1' };

    expect(workerIndex(plan, '0', env)).toBe(0);
    expect(workerIndex(plan, undefined, env)).toBe(2);
    expect(workerIndex(plan, '', { SLURM_ARRAY_TASK_ID: '1', JOB_COMPLETION_INDEX: '' })).toBe(1);
  });

  it('refuses an index past the last campaign, naming the range', () => {
    const error = usageError(() => workerIndex(plan, undefined, { JOB_COMPLETION_INDEX: '4' }));

    expect(error.code).toBe('bad-flag');
    expect(error.message).toBe(`JOB_COMPLETION_INDEX 4 is out of range: ${plan.file} has campaigns 0 to 3`);
  });

  it.each(['-1', '1.5', 'two', ' ', '0x2', '1e0'])('refuses %j: not a whole number', (text) => {
    const error = usageError(() => workerIndex(plan, text, {}));

    expect(error.code).toBe('bad-flag');
    expect(error.message).toBe(`--index needs a whole number, got "${text}"`);
  });

  it('refuses to guess when no index is given', () => {
    const error = usageError(() => workerIndex(plan, undefined, {}));

    expect(error.code).toBe('bad-flag');
    expect(error.message).toMatch(/^--plan needs the campaign to run: --index N, or JOB_COMPLETION_INDEX/);
  });
});

describe('campaignConfig', () => {
  let store: string;
  beforeEach(() => {
    store = tempDir();
  });
  afterEach(() => {
    rmSync(store, { recursive: true, force: true });
  });

  it("is the campaign's configuration on the plan's absolute store", () => {
    const plan = readPlan(writeStorePlan(store, { arms: ['random', 'adaptive+disk'], seeds: 1 }).file);

    const config = campaignConfig(plan, 1);

    expect(config).toMatchObject({
      system: 'kvraft',
      store,
      policy: 'adaptive',
      seed: 10,
      faults: [...DEFAULT_FAULT_FAMILIES, 'disk'],
      timeMs: 1000,
    });
  });

  let plans = 0;
  const edited = (edit: (raw: PlanData) => void): string => {
    const written = writeStorePlan(store, { seeds: 1, id: `edited-${++plans}` });
    const raw = JSON.parse(readFileSync(written.file, 'utf8')) as PlanData;
    edit(raw);
    writeFileSync(written.file, JSON.stringify(raw));
    return written.file;
  };

  it('refuses, when the plan is read, a campaign whose configuration the schema rejects, naming the field', () => {
    const file = edited((raw) => {
      raw.campaigns[1].config.policy = 'greedy';
    });

    const error = usageError(() => readPlan(file));

    expect(error.code).toBe('bad-plan');
    expect(error.message).toContain(`--plan: ${file}: campaign 1: config.policy: `);
  });

  it("range-checks a plan's durations as the flags are", () => {
    const inConfig = edited((raw) => {
      raw.campaigns[0].config.stepMs = 1e300;
    });
    expect(usageError(() => readPlan(inConfig)).message).toMatch(
      /campaign 0: config\.stepMs: must be at most 2147483647 ms/,
    );
    const budget = edited((raw) => {
      raw.timeMs = 1e300;
      for (const c of raw.campaigns) c.config.timeMs = 1e300;
    });
    const error = usageError(() => readPlan(budget));
    expect(error.message).toMatch(/timeMs: must be at most 2147483647 ms/);
    expect(error.message).not.toContain('\n');
    expect(() =>
      configFromFlags({
        system: 'kvraft',
        time: '1000h',
        policy: 'random',
        faults: 'partition',
        workload: 'register',
        bug: [],
        store,
        network: 'auto',
      }),
    ).toThrow(/^--time: must be at most 2147483647 ms/);
  });

  it("refuses a campaign whose seed and config.seed differ, or whose budget is not the plan's", () => {
    const seeds = edited((raw) => {
      raw.campaigns[1].config.seed = 77;
    });
    const error = usageError(() => readPlan(seeds));
    expect(error.code).toBe('bad-plan');
    expect(error.message).toBe(
      `--plan: ${seeds}: campaign 1 has seed 10 but config.seed 77: make them the same (the run would use config.seed)`,
    );
    const budget = edited((raw) => {
      raw.campaigns[0].config.timeMs = 5000;
    });
    expect(usageError(() => readPlan(budget)).message).toContain(
      "campaign 0 has config.timeMs 5000 but the plan's timeMs is 1000",
    );
  });
});
