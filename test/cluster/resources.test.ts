import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { cleanupRegistries, processStartTime, ResourceRegistry } from '../../src/cluster/resources.js';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('ResourceRegistry', () => {
  let stateDir: string;
  beforeEach(() => {
    stateDir = mkdtempSync(join(tmpdir(), 'mallory-test-state-'));
    process.env.MALLORY_STATE_DIR = stateDir;
  });
  afterEach(() => {
    delete process.env.MALLORY_STATE_DIR;
    rmSync(stateDir, { recursive: true, force: true });
  });

  it('removes recorded processes and dirs on releaseAll', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mallory-test-res-'));
    const child = spawn('sleep', ['30'], { detached: true, stdio: 'ignore' });
    const exited = new Promise((r) => child.once('exit', r));
    const registry = new ResourceRegistry('t1', dir);
    registry.record({
      kind: 'process',
      pid: child.pid!,
      startTime: processStartTime(child.pid!)!,
      label: 'sleep',
    });
    registry.record({ kind: 'dir', path: dir });
    expect(existsSync(registry.file)).toBe(true);
    registry.releaseAll();
    await exited;
    expect(alive(child.pid!)).toBe(false);
    expect(existsSync(dir)).toBe(false);
    expect(existsSync(registry.file)).toBe(false);
  });

  it('cleanup removes what a dead owner left, and leaves a live owner alone', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mallory-test-res-'));
    mkdirSync(join(dir, 'inner'));
    const child = spawn('sleep', ['30'], { detached: true, stdio: 'ignore' });
    const exited = new Promise((r) => child.once('exit', r));
    const registry = new ResourceRegistry('t2', dir);
    registry.record({
      kind: 'process',
      pid: child.pid!,
      startTime: processStartTime(child.pid!)!,
      label: 'sleep',
    });
    registry.record({ kind: 'dir', path: dir });

    // The owner (this process) is alive: nothing is touched.
    expect(cleanupRegistries().runs).toEqual([]);
    expect(alive(child.pid!)).toBe(true);

    const report = cleanupRegistries({ force: true });
    expect(report.runs).toHaveLength(1);
    expect(report.removed).toBe(2);
    expect(report.runDirs).toEqual([dir]);
    await exited;
    expect(alive(child.pid!)).toBe(false);
    expect(existsSync(dir)).toBe(false);
  });

  it('a registry that lost its owner line may be a live run: cleanup leaves it and says so; --force removes it', async () => {
    const child = spawn('sleep', ['30'], { detached: true, stdio: 'ignore' });
    const exited = new Promise((r) => child.once('exit', r));
    const registry = new ResourceRegistry('t9', '/store/kvraft/live');
    registry.record({
      kind: 'process',
      pid: child.pid!,
      startTime: processStartTime(child.pid!)!,
      label: 'sleep',
    });
    const lines = readFileSync(registry.file, 'utf8').split('\n');
    writeFileSync(registry.file, lines.slice(1).join('\n'));

    const report = cleanupRegistries();
    expect(report.runs).toEqual([]);
    expect(report.unknown).toEqual([registry.file]);
    expect(alive(child.pid!)).toBe(true);
    expect(existsSync(registry.file)).toBe(true);

    expect(cleanupRegistries({ force: true }).removed).toBe(1);
    await exited;
    expect(alive(child.pid!)).toBe(false);
  });

  it('never kills a process whose PID was reused (start time differs)', () => {
    const child = spawn('sleep', ['30'], { detached: true, stdio: 'ignore' });
    const registry = new ResourceRegistry('t3', tmpdir());
    registry.record({ kind: 'process', pid: child.pid!, startTime: '1', label: 'not-ours' });
    registry.releaseAll();
    expect(alive(child.pid!)).toBe(true);
    process.kill(child.pid!, 'SIGKILL');
  });

  it('a registry appears only with its owner line: a cleanup beside a starting run never sees it ownerless', () => {
    const registry = new ResourceRegistry('t4', '/nowhere');
    const [first] = readFileSync(registry.file, 'utf8').split('\n');
    expect(JSON.parse(first)).toMatchObject({ t: 'owner', pid: process.pid });
    // A registry still being born (owner line written, not yet renamed into place) of a live
    // process is left alone; one whose creator died is removed.
    const bornAlive = join(stateDir, `t5.jsonl.${process.pid}.tmp`);
    writeFileSync(bornAlive, JSON.stringify({ t: 'owner', pid: process.pid, startTime: '' }) + '\n');
    const dead = spawnSync('true').pid;
    const bornDead = join(stateDir, `t6.jsonl.${dead}.tmp`);
    writeFileSync(bornDead, '');
    expect(cleanupRegistries().runs).toEqual([]);
    expect(existsSync(bornAlive)).toBe(true);
    expect(existsSync(bornDead)).toBe(false);
    expect(existsSync(registry.file)).toBe(true);
    registry.releaseAll();
  });

  it('a dead run: --dry-run lists its resources and removes nothing; cleanup then removes them', () => {
    const dir = mkdtempSync(join(tmpdir(), 'mallory-test-res-'));
    const registry = new ResourceRegistry('t7');
    registry.setRunDir('/store/kvraft/run1');
    registry.record({ kind: 'dir', path: dir });
    // Recorded before it was created, and never created: removing it must be harmless.
    registry.record({ kind: 'netns', name: 'mallory-never-made' });
    // Make the registry look like a dead fuzzer's.
    const lines = readFileSync(registry.file, 'utf8').split('\n');
    lines[0] = JSON.stringify({ t: 'owner', pid: spawnSync('true').pid, startTime: 'gone' });
    writeFileSync(registry.file, lines.join('\n'));

    const dry = cleanupRegistries({ dryRun: true });
    expect(dry.runs).toEqual([
      {
        registry: registry.file,
        ownerPid: expect.any(Number) as number,
        runDir: '/store/kvraft/run1',
        resources: ['netns mallory-never-made', `dir ${dir}`],
      },
    ]);
    expect(existsSync(dir)).toBe(true);
    expect(existsSync(registry.file)).toBe(true);

    const report = cleanupRegistries();
    expect(report.removed).toBe(2);
    expect(report.runDirs).toEqual(['/store/kvraft/run1']);
    expect(existsSync(dir)).toBe(false);
    expect(existsSync(registry.file)).toBe(false);
  });

  it('releaseResources keeps the registry file until the final status is recorded', () => {
    const dir = mkdtempSync(join(tmpdir(), 'mallory-test-res-'));
    const registry = new ResourceRegistry('t8', dir);
    registry.record({ kind: 'dir', path: dir });
    registry.releaseResources();
    expect(existsSync(dir)).toBe(false);
    expect(existsSync(registry.file)).toBe(true);
    registry.removeFile();
    expect(existsSync(registry.file)).toBe(false);
  });

  it('a state dir that is a file is one clear error', () => {
    process.env.MALLORY_STATE_DIR = '/etc/hostname';
    expect(() => new ResourceRegistry('t9')).toThrow(
      /^MALLORY_STATE_DIR \/etc\/hostname: \/etc\/hostname is not a directory/,
    );
  });
});
