import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
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
    expect(cleanupRegistries().runs).toBe(0);
    expect(alive(child.pid!)).toBe(true);

    const report = cleanupRegistries({ force: true });
    expect(report.runs).toBe(1);
    expect(report.removed).toBe(2);
    expect(report.runDirs).toEqual([dir]);
    await exited;
    expect(alive(child.pid!)).toBe(false);
    expect(existsSync(dir)).toBe(false);
  });

  it('never kills a process whose PID was reused (start time differs)', () => {
    const child = spawn('sleep', ['30'], { detached: true, stdio: 'ignore' });
    const registry = new ResourceRegistry('t3', tmpdir());
    registry.record({ kind: 'process', pid: child.pid!, startTime: '1', label: 'not-ours' });
    registry.releaseAll();
    expect(alive(child.pid!)).toBe(true);
    process.kill(child.pid!, 'SIGKILL');
  });
});
