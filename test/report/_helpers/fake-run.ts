import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import type { Op } from '../../../src/core/op.js';
import { readStoredRun } from '../../../src/store/run-reader.js';
import { RunStore } from '../../../src/store/run-store.js';

const NS_PER_MS = 1_000_000;

/**
 * A small finished kvraft run written through the real store, without running anything: one
 * schedule of 4 steps of 1 s with a kill of n2 (1.0–2.5 s) and a partition (1.5–3.0 s), one skipped
 * fault, client ops of every outcome, n1 leading from 0.2 s, and one bug with a check.html.
 */
export function fakeRun(): { readonly store: string; readonly dir: string } {
  const store = join(mkdtempSync(join(tmpdir(), 'mallory-report-')), 'store');
  const run = RunStore.create(store, {
    id: 'fake',
    system: 'kvraft',
    seed: 5,
    policy: 'random',
    config: { steps: 4, stepMs: 1000 },
  });
  const startedAt = readStoredRun(run.dir).run.startedAt;
  const wall = (ms: number): string => new Date(Date.parse(startedAt) + ms).toISOString();
  run.scheduleStarted(0, 0);
  for (let step = 0; step < 4; step++) {
    run.step({
      schedule: 0,
      step,
      startedMs: step * 1000,
      endedMs: (step + 1) * 1000,
      fault: null,
      state: `s${step}`,
      stateArrived: true,
      reward: 0,
      metrics: null,
    });
    run.metrics((step + 1) * 1000, 0, step, {
      states_causal: step + 1,
      states_artifact: 1,
      event_types: 3 + step,
    });
  }
  run.fault({ schedule: 0, step: 1, atMs: 1000, f: 'kill', value: 'one', nodes: ['n2'], outcome: 'ok' });
  run.fault({
    schedule: 0,
    step: 1,
    atMs: 1500,
    f: 'start-partition',
    value: 'halves',
    nodes: ['n1', 'n2', 'n3'],
    outcome: 'ok',
    // n1 cut off from n2 and n3, both ways: the sides n1 | n2,n3.
    links: [
      ['n1', 'n2'],
      ['n1', 'n3'],
      ['n2', 'n1'],
      ['n3', 'n1'],
    ],
  });
  run.fault({ schedule: 0, step: 2, atMs: 2000, f: 'resume', value: 'all', nodes: [], outcome: 'skipped' });
  run.fault({ schedule: 0, step: 2, atMs: 2500, f: 'start', value: 'all', nodes: ['n2'], outcome: 'ok' });
  run.fault({
    schedule: 0,
    step: 3,
    atMs: 3000,
    f: 'stop-partition',
    value: null,
    nodes: ['n1', 'n2', 'n3'],
    outcome: 'ok',
  });
  run.fault({
    schedule: 0,
    step: 3,
    atMs: 3200,
    f: 'member-remove',
    value: 'one',
    nodes: [],
    outcome: 'error',
    error: 'not yet committed',
  });
  const ops: Omit<Op, 'index'>[] = [];
  for (let ms = 100; ms < 4000; ms += 100) {
    const type = ms >= 1500 && ms < 3000 ? (ms % 200 === 0 ? 'fail' : 'info') : 'ok';
    const process = ms / 100;
    ops.push({ time: ms * NS_PER_MS, type: 'invoke', process, f: 'write', value: ['k', ms] });
    // Half the fails are refused connections (a node down), which runs count apart.
    const error =
      type === 'ok' ? {} : { error: ms % 400 === 0 ? 'connect ECONNREFUSED 127.0.0.1:7001' : 'not leader' };
    ops.push({ time: (ms + 20) * NS_PER_MS, type, process, f: 'write', value: ['k', ms], ...error });
  }
  ops.push({ time: 1000 * NS_PER_MS, type: 'info', process: 'nemesis', f: 'kill', value: ['n2'] });
  ops
    .sort((a, b) => a.time - b.time)
    .forEach((op, index) => {
      run.appendOp({ index, ...op });
    });
  // As a campaign stores it: what each checker found, and what each check said.
  const verdicts = [
    { checker: 'crash', valid: true, findings: [], ops: null, ms: null },
    { checker: 'recovery', valid: true, findings: [], ops: null, ms: null },
    { checker: 'linearizable', valid: false, findings: ['linearizability/register'], ops: 32, ms: 3 },
  ];
  const checks = { linearizable: ['linearizability/register'] };
  run.scheduleEnded(0, 4200, ops.length, { findings: 1, checks, valid: false, verdicts }, 50);
  const id = run.bug({
    schedule: 0,
    kind: 'linearizability',
    name: 'register',
    message: 'read 3 cannot be placed after state 2',
    evidence: {},
    faultSchedule: [],
    seed: 5,
    foundAtMs: 4100,
  });
  const bugDir = join(run.dir, 'bugs', String(id));
  mkdirSync(bugDir, { recursive: true });
  writeFileSync(join(bugDir, 'check.html'), '<html></html>');
  for (const node of ['n1', 'n2', 'n3']) {
    mkdirSync(join(run.dir, 'nodes', node), { recursive: true });
    const lines = [`${wall(150)} ${node} node-start term=0`, 'a line without a time'];
    if (node === 'n1') lines.push(`${wall(200)} n1 become-leader term=1`);
    else lines.push(`${wall(210)} ${node} become-follower term=1`);
    writeFileSync(join(run.dir, 'nodes', node, 'stdout.log'), lines.join('\n') + '\n');
  }
  run.finish('complete', {
    elapsedMs: 4300,
    metrics: { states_causal: 4, states_artifact: 1, event_types: 6 },
  });
  run.close();
  return { store, dir: run.dir };
}
