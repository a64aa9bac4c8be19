import { spawn } from 'node:child_process';
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { join } from 'node:path';

import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';

import {
  BIN,
  mallory,
  processesMentioning,
  REPO,
  registryFiles,
  waitFor,
  jsonOf,
  explainExit,
  useSandboxes,
} from './helpers.js';

describe('mallory run (kvraft, real processes)', () => {
  const newSandbox = useSandboxes();

  it('runs a campaign end to end: history, run.db, summary, nothing left running', async () => {
    const box = newSandbox();
    const r = await mallory(
      ['run', '--time', '35s', '--seed', '11', '--policy', 'random', '--store', box.store, '--json'],
      box,
    );
    expect(r.stderr).toContain('run dir');
    expect(r.code, explainExit(r)).toBe(0);
    const summary = jsonOf(r) as {
      runDir: string;
      schedules: number;
      ops: { ok: number };
      faults: number;
      status: string;
    };
    expect(summary.status).toBe('complete');
    expect(summary.schedules).toBeGreaterThanOrEqual(1);
    expect(realpathSync(join(box.store, 'latest'))).toBe(realpathSync(summary.runDir));
    const history = readFileSync(join(summary.runDir, 'history.jsonl'), 'utf8').trim().split('\n');
    expect(history.length).toBeGreaterThan(1000);
    const first = JSON.parse(history[0]) as Record<string, unknown>;
    expect(Object.keys(first)).toEqual(
      expect.arrayContaining(['index', 'time', 'type', 'process', 'f', 'value']),
    );
    const db = new Database(join(summary.runDir, 'run.db'), { readonly: true });
    expect((db.prepare('SELECT count(*) AS n FROM schedules').get() as { n: number }).n).toBe(
      summary.schedules,
    );
    expect((db.prepare('SELECT count(*) AS n FROM steps').get() as { n: number }).n).toBeGreaterThanOrEqual(
      12,
    );
    expect(
      (db.prepare("SELECT count(*) AS n FROM faults WHERE outcome = 'ok'").get() as { n: number }).n,
    ).toBe(summary.faults);
    const run = db.prepare('SELECT status, id FROM run').get() as { status: string; id: string };
    expect(run.status).toBe('complete');
    db.close();
    expect(existsSync(join(summary.runDir, 'nodes', 'n1', 'stdout.log'))).toBe(true);
    expect(processesMentioning(`mallory-${run.id}`)).toEqual([]);
    expect(registryFiles(box)).toEqual([]);
  });

  it('after SIGKILL of the fuzzer, cleanup leaves no process or temp dir, and the partial run stays readable', async () => {
    const box = newSandbox();
    const child = spawn(process.execPath, [BIN, 'run', '--time', '5m', '--seed', '3', '--store', box.store], {
      env: box.env,
      cwd: REPO,
      stdio: 'ignore',
    });
    const runDir = (): string | undefined => {
      try {
        return realpathSync(join(box.store, 'latest'));
      } catch {
        return undefined;
      }
    };
    await waitFor(() => {
      const dir = runDir();
      return (
        dir !== undefined &&
        existsSync(join(dir, 'history.jsonl')) &&
        readFileSync(join(dir, 'history.jsonl'), 'utf8').length > 20_000
      );
    }, 60_000);
    const dir = runDir()!;
    // What the registry holds now: every resource added and not yet released (a checkpoint's
    // partial copy is added, then released once it is renamed whole).
    const live = new Map<number, { kind: string; pid?: number; path?: string }>();
    for (const line of readFileSync(join(box.state, registryFiles(box)[0]), 'utf8')
      .trim()
      .split('\n')) {
      const entry = JSON.parse(line) as {
        t: string;
        id: number;
        resource?: { kind: string; pid?: number; path?: string };
      };
      if (entry.t === 'add' && entry.resource) live.set(entry.id, entry.resource);
      else if (entry.t === 'release') live.delete(entry.id);
    }
    const pids = [...live.values()].flatMap((r) =>
      r.pid !== undefined && r.pid !== child.pid ? [r.pid] : [],
    );
    const dataDirs = [...live.values()].flatMap((r) =>
      r.kind === 'dir' && r.path !== undefined ? [r.path] : [],
    );
    expect(pids.length).toBeGreaterThanOrEqual(3);
    expect(dataDirs.every((d) => existsSync(d))).toBe(true);
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGKILL');
    await exited;
    expect(pids.some((p) => existsSync(`/proc/${p}`))).toBe(true); // the nodes outlive the fuzzer

    const cleanup = await mallory(['cleanup'], box);
    expect(cleanup.code).toBe(0);
    expect(cleanup.stdout).toMatch(/removed \d+ resources of 1 runs/);
    expect(cleanup.stdout).toContain('marked incomplete');
    await waitFor(() => pids.every((p) => !existsSync(`/proc/${p}`)), 5000);
    expect(dataDirs.some((d) => existsSync(d))).toBe(false);
    expect(registryFiles(box)).toEqual([]);
    const db = new Database(join(dir, 'run.db'), { readonly: true });
    expect((db.prepare('SELECT status FROM run').get() as { status: string }).status).toBe('incomplete');
    db.close();
    const lines = readFileSync(join(dir, 'history.jsonl'), 'utf8').trim().split('\n');
    expect(lines.length).toBeGreaterThan(50);
    expect(() => lines.slice(0, -1).map((l) => JSON.parse(l) as unknown)).not.toThrow();
  });

  it('stops cleanly on Ctrl-C (SIGINT): status interrupted, nothing left behind', async () => {
    const box = newSandbox();
    const child = spawn(process.execPath, [BIN, 'run', '--time', '5m', '--seed', '4', '--store', box.store], {
      env: box.env,
      cwd: REPO,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    await waitFor(() => stderr.includes('run dir'), 30_000);
    await new Promise((r) => setTimeout(r, 6000));
    const exited = new Promise<number | null>((r) =>
      child.once('exit', (code) => {
        r(code);
      }),
    );
    child.kill('SIGINT');
    const code = await exited;
    expect(code).toBe(130);
    const dir = realpathSync(join(box.store, 'latest'));
    const db = new Database(join(dir, 'run.db'), { readonly: true });
    const run = db.prepare('SELECT status, id FROM run').get() as { status: string; id: string };
    expect(run.status).toBe('interrupted');
    db.close();
    expect(processesMentioning(`mallory-${run.id}`)).toEqual([]);
    expect(registryFiles(box)).toEqual([]);
  });

  it('rejects bad input with one line and exit 2', async () => {
    const box = newSandbox();
    const unknown = await mallory(['run', '--system', 'nosuch', '--store', box.store], box);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr.trim().split('\n')).toHaveLength(1);
    expect(unknown.stderr).toContain('unknown system "nosuch"');
    const badBug = await mallory(['run', '--bug', 'nope', '--store', box.store], box);
    expect(badBug.code).toBe(2);
    expect(badBug.stderr).toContain('no bug switch "nope"');
  });
});
