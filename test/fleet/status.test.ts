import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import type { Plan } from '../../src/fleet/plan.js';
import {
  CAMPAIGNS_DIR,
  type IndexRecord,
  type RecordedFinding,
  STALE_CLAIM_MS,
  writeRecord,
} from '../../src/fleet/records.js';
import { fleetStatus, planFinished } from '../../src/fleet/status.js';
import { tempDir, writeStorePlan } from './_helpers/plan.js';

const STARTED = '2024-05-01T10:00:00.000Z';

function finding(signature: string): RecordedFinding {
  return {
    kind: 'linearizability',
    name: signature,
    signature,
    message: `found ${signature}`,
    schedule: 0,
    foundAtMs: 100,
    dir: `/runs/bugs/${signature}`,
  };
}

function record(index: number, fields: Partial<IndexRecord> = {}): IndexRecord {
  return { index, status: 'done', attempt: 1, host: 'h', pid: 7, startedAt: STARTED, ...fields };
}

describe('fleetStatus', () => {
  let store: string;
  let plan: Plan;
  beforeEach(() => {
    store = tempDir();
    // 2 arms × 4 seeds: indices 0 … 7
    plan = writeStorePlan(store, { seeds: 4 });
    mkdirSync(join(plan.dir, CAMPAIGNS_DIR), { recursive: true });
  });
  afterEach(() => {
    rmSync(store, { recursive: true, force: true });
  });

  const writeLock = (index: number, host: string, beat: Date): void => {
    const since = beat.toISOString();
    writeFileSync(
      join(plan.dir, CAMPAIGNS_DIR, `${index}.lock`),
      JSON.stringify({ host, pid: 4242, token: 't', since, beat: since }),
    );
  };

  it('of a plan nobody started: every index pending', () => {
    const status = fleetStatus(plan);

    expect(status).toMatchObject({
      plan: plan.file,
      id: 'test-plan',
      total: 8,
      findings: 0,
      distinctFindings: 0,
    });
    expect(status.counts).toEqual({
      pending: 8,
      running: 0,
      done: 0,
      failed: 0,
      interrupted: 0,
      abandoned: 0,
    });
    expect(status.indices[3]).toEqual({
      index: 3,
      group: 'all',
      arm: 'random',
      seed: 11,
      state: 'pending',
      attempt: 0,
      findings: 0,
    });
    expect(planFinished(status)).toBe(false);
  });

  it("tells each index's state from its record and its worker's lock", () => {
    writeRecord(plan, record(0, { runDir: join(store, 'runs/0') }));
    writeRecord(plan, record(1, { status: 'failed', error: 'the cluster never served' }));
    writeRecord(plan, record(2, { status: 'interrupted' }));
    writeRecord(plan, record(3, { status: 'running', attempt: 2 }));
    writeRecord(plan, record(4, { status: 'running' }));
    writeLock(4, 'another-host', new Date());
    writeLock(5, 'another-host', new Date());
    writeRecord(plan, record(6, { status: 'running' }));
    writeLock(6, 'another-host', new Date(Date.now() - STALE_CLAIM_MS - 1000));

    const status = fleetStatus(plan);

    expect(status.indices.map((row) => row.state)).toEqual([
      'done',
      'failed',
      'interrupted',
      'abandoned',
      'running',
      'running',
      'abandoned',
      'pending',
    ]);
    expect(status.counts).toEqual({
      pending: 1,
      running: 2,
      done: 1,
      failed: 1,
      interrupted: 1,
      abandoned: 2,
    });
    expect(status.indices[0]).toMatchObject({ runDir: join(store, 'runs/0'), attempt: 1 });
    expect(status.indices[1].error).toBe('the cluster never served');
    expect(status.indices[3]).toMatchObject({ state: 'abandoned', attempt: 2 });
    expect(status.indices[4].worker).toBe('another-host:4242');
    expect(status.indices[3].worker).toBeUndefined();
  });

  it('names the error of a failed index only', () => {
    writeRecord(plan, record(0, { status: 'interrupted', error: 'stopped' }));

    expect(fleetStatus(plan).indices[0]).not.toHaveProperty('error');
  });

  it("counts this host's lock as running only while its pid runs", () => {
    writeRecord(plan, record(0, { status: 'running' }));
    writeFileSync(
      join(plan.dir, CAMPAIGNS_DIR, '0.lock'),
      JSON.stringify({
        host: hostname(),
        pid: process.pid,
        token: 't',
        since: STARTED,
        beat: new Date().toISOString(),
      }),
    );

    expect(fleetStatus(plan).indices[0]).toMatchObject({
      state: 'running',
      worker: `${hostname()}:${process.pid}`,
    });
  });

  it('counts the findings of done indices only, and the distinct ones by signature', () => {
    writeRecord(plan, record(0, { findings: [finding('a'), finding('b')] }));
    writeRecord(plan, record(1, { findings: [finding('a')] }));
    writeRecord(plan, record(2, { status: 'failed', findings: [finding('c')] }));
    writeRecord(plan, record(3, { status: 'running', findings: [finding('d')] }));
    writeRecord(plan, record(4));

    const status = fleetStatus(plan);

    expect(status.findings).toBe(3);
    expect(status.distinctFindings).toBe(2);
    expect(status.indices.map((row) => row.findings)).toEqual([2, 1, 0, 0, 0, 0, 0, 0]);
  });

  it('of a plan every index of which is done: finished', () => {
    for (let i = 0; i < 7; i++) writeRecord(plan, record(i));
    expect(planFinished(fleetStatus(plan))).toBe(false);

    writeRecord(plan, record(7));

    expect(planFinished(fleetStatus(plan))).toBe(true);
  });
});
