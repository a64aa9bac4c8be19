import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { CONSOLE_LOG } from '../../src/cli/console-log-reporter.js';
import { explainCampaign, runDirOf, STDERR_TAIL_LINES, useSandbox, useSandboxes } from './helpers.js';

describe('explainCampaign', () => {
  const root = mkdtempSync(join(tmpdir(), 'mallory-explain-'));
  afterAll(() => {
    rmSync(root, { recursive: true, force: true });
  });

  it("shows a campaign's last stderr lines and its run dir's console log", () => {
    const runDir = join(root, 'store', 'dqlite', '20261207T000000-000Z');
    mkdirSync(runDir, { recursive: true });
    writeFileSync(join(runDir, CONSOLE_LOG), 'mallory: dqlite on 5 nodes\n  [00:01.0] schedule 1 kill n2\n');
    const filler = Array.from({ length: 100 }, (_, i) => `line ${i}`);
    const stderr = [
      'mallory: dqlite on 5 nodes, policy adaptive, seed 1',
      `  run dir ${runDir}`,
      ...filler,
      'mallory: internal error: start-up failed',
      '',
    ].join('\n');

    const text = explainCampaign(2, stderr);

    expect(runDirOf(stderr)).toBe(runDir);
    expect(text).toContain('exit 2');
    expect(text).toContain('mallory: internal error: start-up failed');
    expect(text).toContain(`line ${100 - STDERR_TAIL_LINES + 1}`);
    expect(text).not.toContain(`line ${100 - STDERR_TAIL_LINES - 1}\n`);
    expect(text).toContain('[00:01.0] schedule 1 kill n2');
  });

  it('says when the run ended before it had a run dir', () => {
    expect(explainCampaign(2, 'mallory: bad --time\n')).toContain('no run dir');
  });
});

describe('useSandboxes', () => {
  let made: string | undefined;
  describe('a test that makes a sandbox', () => {
    const newSandbox = useSandboxes();
    it('gets a store and a state dir of its own', () => {
      const box = newSandbox();
      mkdirSync(box.store, { recursive: true });
      made = join(box.store, '..');
      expect(box.env.MALLORY_STATE_DIR).toBe(box.state);
      expect(newSandbox().store).not.toBe(box.store);
    });
    it('finds it removed after that test', () => {
      expect(made).toBeDefined();
      expect(existsSync(made ?? '')).toBe(false);
    });
  });
});

describe('useSandbox', () => {
  let made: string | undefined;
  describe('tests sharing one sandbox', () => {
    const box = useSandbox();
    it('see the same sandbox', () => {
      mkdirSync(box().store, { recursive: true });
      made = join(box().store, '..');
    });
    it('still there in the next test', () => {
      expect(join(box().store, '..')).toBe(made);
      expect(existsSync(made ?? '')).toBe(true);
    });
  });
  it('is removed after the describe', () => {
    expect(made).toBeDefined();
    expect(existsSync(made ?? '')).toBe(false);
  });
});
