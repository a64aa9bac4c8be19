import { spawn } from 'node:child_process';
import { existsSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';

import type { AfterBudget } from '../../src/core/run-timing.js';
import {
  BIN,
  explainExit,
  jsonOf,
  mallory,
  processesMentioning,
  REPO,
  registryFiles,
  useSandboxes,
  waitFor,
} from './helpers.js';

/**
 * Every node cut off from every other, then two removals: none can commit, and each call retries
 * for about ten seconds. The budget (8 s, start-up included) comes while one of them is out.
 */
const SCHEDULE = [
  { atMs: 0, f: 'start-partition', value: null, groups: [['n1'], ['n2'], ['n3']] },
  { atMs: 500, f: 'member-remove', value: ['n3'] },
  { atMs: 600, f: 'member-remove', value: ['n2'] },
];
const BUDGET_MS = 8_000;
/** How far past the budget the faults may end: the cut comes at the budget, give or take a turn of a loaded machine. */
const CUT_SLACK_MS = 2_000;

interface HistoryOp {
  readonly time: number;
  readonly type: string;
  readonly process: unknown;
  readonly f: string;
  readonly value: unknown;
  readonly error?: string;
}

describe('mallory run: the time budget bounds the faults (kvraft, real processes)', () => {
  const newSandbox = useSandboxes();

  it('a membership change still out at --time is cut short there, recorded as :info; the terminal says what followed the budget', async () => {
    const box = newSandbox();
    const schedule = join(box.state, '..', 'budget.jsonl');
    writeFileSync(schedule, SCHEDULE.map((l) => JSON.stringify(l)).join('\n'));
    const r = await mallory(
      ['run', '--time', `${BUDGET_MS / 1000}s`, '--schedule', schedule, '--store', box.store, '--json'],
      box,
    );
    expect(r.code, explainExit(r)).toBe(0);
    const summary = jsonOf(r) as {
      runDir: string;
      status: string;
      timing: { budgetMs: number; afterBudget?: AfterBudget };
    };
    expect(summary.status).toBe('complete');

    // The removal out at the budget came back then, as an :info op saying it was cut short; the
    // one queued behind it never started.
    const ops = readFileSync(join(summary.runDir, 'history.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as HistoryOp)
      .filter((op) => op.process === 'nemesis' && op.f === 'member-remove');
    const cut = ops.filter((op) => op.error?.startsWith('cut short at the time budget (--time 8 s)'));
    expect(cut, JSON.stringify(ops)).toHaveLength(1);
    expect(cut[0].type).toBe('info');
    expect(
      ops.filter((op) => op.error === 'skipped: past the time budget (--time)').length,
    ).toBeLessThanOrEqual(1);
    expect(ops.every((op) => op.type === 'info')).toBe(true);
    const db = new Database(join(summary.runDir, 'run.db'), { readonly: true });
    const rows = db.prepare("SELECT outcome, error FROM faults WHERE f = 'member-remove'").all() as {
      outcome: string;
      error: string | null;
    }[];
    db.close();
    expect(rows.filter((row) => row.outcome === 'ok')).toEqual([]);
    expect(rows.filter((row) => row.error?.startsWith('cut short at the time budget'))).toHaveLength(1);

    // What followed the budget: in the summary, results.json and on the terminal.
    const after = summary.timing.afterBudget;
    expect(after).toBeDefined();
    expect(after!.faultsEndedMs).toBeGreaterThanOrEqual(BUDGET_MS);
    expect(after!.faultsEndedMs).toBeLessThan(BUDGET_MS + CUT_SLACK_MS);
    const results = JSON.parse(readFileSync(join(summary.runDir, 'results.json'), 'utf8')) as {
      timing: { afterBudget: AfterBudget };
    };
    expect(results.timing.afterBudget).toEqual(after);
    const s = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;
    expect(r.stderr).toContain('budget reached at 00:08');
    expect(r.stderr).toContain(
      `; reset ${s(after!.resetMs)}, final reads ${s(after!.finalReadsMs)}, checks ${s(after!.checksMs)}`,
    );

    // The reset healed what the cut call left: nothing of the run is left running.
    const run = JSON.parse(readFileSync(join(summary.runDir, 'results.json'), 'utf8')) as {
      run: { id: string };
    };
    expect(processesMentioning(`mallory-${run.run.id}`)).toEqual([]);
    expect(registryFiles(box)).toEqual([]);
  });

  it('Ctrl-C during a membership change cuts it short at once: the run ends interrupted, the op :info', async () => {
    const box = newSandbox();
    const schedule = join(box.state, '..', 'ctrl-c.jsonl');
    writeFileSync(
      schedule,
      SCHEDULE.slice(0, 2)
        .map((l) => JSON.stringify(l))
        .join('\n'),
    );
    const child = spawn(
      process.execPath,
      [BIN, 'run', '--time', '5m', '--schedule', schedule, '--store', box.store],
      {
        env: box.env,
        cwd: REPO,
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((r) =>
      child.once('exit', (code) => {
        r(code);
      }),
    );
    const history = (): string => {
      const file = join(box.store, 'latest', 'history.jsonl');
      return existsSync(file) ? readFileSync(file, 'utf8') : '';
    };
    // The removal is out (it cannot commit for about ten seconds).
    await waitFor(() => history().includes('"f":"member-remove","value":["n3"]}'), 60_000);
    child.kill('SIGINT');
    expect(await exited, stderr).toBe(130);

    const ops = history()
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as HistoryOp)
      .filter((op) => op.process === 'nemesis' && op.f === 'member-remove');
    expect(ops.map(({ type, error }) => ({ type, error }))).toEqual([
      { type: 'info', error: undefined },
      { type: 'info', error: 'cut short: the run is stopping' },
    ]);
    const dir = realpathSync(join(box.store, 'latest'));
    const results = JSON.parse(readFileSync(join(dir, 'results.json'), 'utf8')) as {
      status: string;
      run: { id: string };
    };
    expect(results.status).toBe('interrupted');
    expect(processesMentioning(`mallory-${results.run.id}`)).toEqual([]);
    expect(registryFiles(box)).toEqual([]);
  });
});
