import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { analyseLog, formatLogReport, type LogFileReport } from '../../src/cli/logs.js';
import { matchLogRules } from '../../src/systems/log-rules.js';
import type { SystemAdapter } from '../../src/systems/system.js';
import { RunStore } from '../../src/store/run-store.js';
import { REPO_ROOT } from '../check/data-dir.js';
import { fakeRun } from '../report/_helpers/fake-run.js';

const MALLORY = path.join(REPO_ROOT, 'bin', 'mallory.js');
const FIXTURES = path.join(REPO_ROOT, 'test', 'fixtures');
const SAMPLE_LOG = path.join(FIXTURES, 'logs', 'kvraft-node.log');
const OUTSIDE_SYSTEM = path.join(FIXTURES, 'systems', 'kvraft-outside.ts');
const run = promisify(execFile);

async function mallory(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [MALLORY, ...args], { timeout: 60_000 });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

/** Only what `analyseLog` reads of a system. */
function fakeSystem(): SystemAdapter {
  return {
    crashPatterns: [/BROKEN/],
    membershipExitPatterns: [/removed from the cluster/],
    parseLog: (line: string) =>
      matchLogRules([{ re: /leader at term (\d+)/, type: 'leader', groups: ['term'] }], line),
  } as Partial<SystemAdapter> as SystemAdapter;
}

describe('analyseLog', () => {
  const text = [
    'n1 became leader at term 4',
    'some chatter 1',
    'some chatter 2',
    'BROKEN invariant',
    'panic: nil map',
    'n1 removed from the cluster, BROKEN? no: leaving',
    '',
  ].join('\n');

  it('gives the rule events, the crash matches (system and generic) and the membership exits, by line', () => {
    const report = analyseLog(fakeSystem(), 'n1.log', text);
    expect(report.lines).toBe(6);
    expect(report.events).toEqual({ leader: 1 });
    expect(report.crashes).toBe(2);
    expect(report.membershipExits).toBe(1);
    expect(report.matches.map((m) => m.line)).toEqual([1, 4, 5, 6]);
    expect(report.matches[0].event).toEqual({ type: 'leader', attrs: { term: 4 } });
    expect(report.matches[1].crash).toEqual({ pattern: '/BROKEN/', generic: false });
    expect(report.matches[2].crash?.generic).toBe(true);
    // A membership exit is the harness's doing: it wins over a crash pattern on the same line.
    expect(report.matches[3]).toMatchObject({ membershipExit: { pattern: '/removed from the cluster/' } });
    expect(report.matches[3].crash).toBeUndefined();
    expect(report.mined.lines).toBe(5);
  });

  it('with all, lists every line and the template a campaign mines it as', () => {
    const report = analyseLog(fakeSystem(), 'n1.log', text, true);
    expect(report.matches).toHaveLength(6);
    expect(report.matches[1].mined).toBe(report.matches[2].mined);
    expect(formatLogReport(report)).toMatch(/^\s+2\s+mined L\d+\s+some chatter 1$/m);
  });
});

describe('mallory logs', () => {
  beforeAll(() => {
    if (!existsSync(path.join(REPO_ROOT, 'dist', 'cli', 'logs.js'))) {
      throw new Error('dist/ is missing: run `npm run build` first (npm test does)');
    }
  });

  it('prints what a path-loaded system makes of a sample log, and exits 1 on a crash match', async () => {
    const r = await mallory('logs', '--system', OUTSIDE_SYSTEM, SAMPLE_LOG);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^\s+3\s+event voted term=1 candidate=n2\s+.*vote-granted/m);
    expect(r.stdout).toMatch(/^\s+6\s+event won-election term=2\s/m);
    expect(r.stdout).toMatch(
      /^\s+8\s+CRASH \/Assertion .*ASSERTION FAILED\/i \(generic\)\s+ASSERTION FAILED: commit/m,
    );
    expect(r.stdout).toMatch(/^\s+9\s+CRASH \/kvraft-outside: broken\//m);
    expect(r.stdout).toMatch(/^9 lines: 3 events from the system's log rules .*; 2 crash match\(es\)/m);
  });

  it('--json gives one document', async () => {
    const r = await mallory('logs', '--system', OUTSIDE_SYSTEM, '--json', SAMPLE_LOG);
    const doc = JSON.parse(r.stdout) as { system: string; source: string; files: LogFileReport[] };
    expect(doc.system).toBe('kvraft-outside');
    expect(doc.source).toBe(OUTSIDE_SYSTEM);
    expect(doc.files[0].events).toEqual({ voted: 1, 'started-election': 1, 'won-election': 1 });
  });

  it('exits 0 when nothing matches a crash pattern, and 2 on a file it cannot read', async () => {
    const clean = await mallory(
      'logs',
      '--system',
      'kvraft',
      path.join(FIXTURES, 'systems', 'kvraft-outside.ts'),
    );
    expect(clean.code).toBe(0);
    const missing = await mallory('logs', '--system', 'kvraft', path.join(FIXTURES, 'no-such.log'));
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/^mallory: cannot read .*no-such\.log/);
  });
});

describe('mallory logs without --system', () => {
  const run = fakeRun();
  const nodeLog = path.join(run.dir, 'nodes', 'n1', 'stdout.log');
  const dir = mkdtempSync(path.join(tmpdir(), 'mallory-logs-'));
  beforeAll(() => {
    mkdirSync(path.dirname(nodeLog), { recursive: true });
    copyFileSync(SAMPLE_LOG, nodeLog);
  });
  afterAll(() => {
    rmSync(path.join(run.store, '..'), { recursive: true, force: true });
    rmSync(dir, { recursive: true, force: true });
  });

  it('reads a node log inside a run dir as the system the run recorded (here kvraft)', async () => {
    const given = await mallory('logs', '--system', 'kvraft', nodeLog);
    const recorded = await mallory('logs', nodeLog);
    expect(recorded.stderr).toBe('');
    expect(recorded.code).toBe(given.code);
    expect(recorded.stdout).toBe(given.stdout);
    const json = JSON.parse((await mallory('logs', '--json', nodeLog)).stdout) as { system: string };
    expect(json.system).toBe('kvraft');
  });

  it('says to give --system, in one line (exit 2), for a file in no run or a run whose system is gone', async () => {
    const loose = path.join(dir, 'n1.log');
    copyFileSync(SAMPLE_LOG, loose);
    const r = await mallory('logs', loose);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      `mallory: logs: ${loose} is not inside a run directory, so which system wrote it is not recorded: give --system NAME|PATH\n`,
    );
    const gone = RunStore.create(path.join(dir, 'store'), {
      id: 'gone',
      system: 'my-kv',
      seed: 1,
      policy: 'random',
      config: { system: path.join(dir, 'no-such-system.ts') },
    });
    gone.finish('complete', { elapsedMs: 1 });
    gone.close();
    const log = path.join(gone.dir, 'nodes', 'n1', 'stdout.log');
    mkdirSync(path.dirname(log), { recursive: true });
    copyFileSync(SAMPLE_LOG, log);
    const g = await mallory('logs', log);
    expect(g.code).toBe(2);
    expect(g.stderr.split('\n')).toHaveLength(2);
    expect(g.stderr).toMatch(
      new RegExp(
        `^mallory: logs: .*stdout\\.log is from a run of --system .*no-such-system\\.ts, which cannot be loaded here \\(.*\\): give --system NAME\\|PATH\\n$`,
      ),
    );
  });
});
