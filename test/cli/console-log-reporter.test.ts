import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import { CONSOLE_LOG, ConsoleLogReporter } from '../../src/cli/console-log-reporter.js';

let dir: string | undefined;
afterEach(() => {
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

describe('ConsoleLogReporter', () => {
  it("writes each line to the run dir's mallory.log as it is printed, not at the end", () => {
    const runDir = mkdtempSync(path.join(tmpdir(), 'mallory-console-log-'));
    dir = runDir;
    const reporter = new ConsoleLogReporter();
    reporter.runStarted({ runDir, system: 'kvraft', seed: 7, policy: 'adaptive', nodes: ['n1', 'n2', 'n3'] });
    const file = path.join(runDir, CONSOLE_LOG);
    expect(reporter.path).toBe(file);
    expect(readFileSync(file, 'utf8')).toBe(
      `mallory: kvraft on 3 nodes, policy adaptive, seed 7\n  run dir ${runDir}\n`,
    );
    reporter.fault({ fault: { f: 'kill', value: 'one' }, nodes: ['n2'], outcome: 'ok' }, 0, 2500, 12_300);
    expect(readFileSync(file, 'utf8')).toMatch(/\n {2}\[00:12\.3\] schedule 1 kill:one on n2 \(ok\)\n$/);
    reporter.message('mallory: a message');
    expect(readFileSync(file, 'utf8').endsWith('mallory: a message\n')).toBe(true);
  });
});
