import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { BIN, descendantsOf, explainExit, jsonOf, mallory, REPO, sandbox, waitFor } from './helpers.js';

/** How long a compare stopped by Ctrl-C may take to end (its campaign's reset and checks). */
const STOP_BOUND_MS = 60_000;

/** The history files of the runs under `store`, as they are now. */
function historiesUnder(store: string): string[] {
  if (!existsSync(store)) return [];
  return readdirSync(store, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('history.jsonl'))
    .map((f) => readFileSync(join(store, f), 'utf8'));
}

describe('mallory compare (kvraft, real processes)', () => {
  const box = sandbox();
  afterAll(() => {
    rmSync(join(box.store, '..'), { recursive: true, force: true });
  });

  it('runs each policy on the same seeds and prints the comparison as JSON, with a coverage plot', async () => {
    const r = await mallory(
      [
        'compare',
        '--policies',
        'adaptive,random',
        '--runs',
        '1',
        '--time',
        '15s',
        '--seed',
        '21',
        '--store',
        box.store,
        '--json',
      ],
      box,
    );
    expect(r.code, explainExit(r)).toBe(0);
    const result = jsonOf(r) as {
      policies: Record<
        string,
        { runs: { seed: number; metrics: Record<string, number>; bugs: unknown[] }[] }
      >;
      comparisons: {
        metric: string;
        policy: string;
        baseline: string;
        ratio: number;
        a12: number;
        p: number;
      }[];
      plot: string;
    };
    expect(Object.keys(result.policies).sort()).toEqual(['adaptive', 'random']);
    expect(result.policies.adaptive.runs[0].seed).toBe(21);
    expect(result.policies.random.runs[0].seed).toBe(21);
    expect(result.policies.adaptive.runs[0].metrics.windows).toBeGreaterThan(0);
    const states = result.comparisons.find((c) => c.metric.includes('states'));
    expect(states).toMatchObject({ policy: 'adaptive', baseline: 'random' });
    expect(states!.a12).toBeGreaterThanOrEqual(0);
    expect(states!.a12).toBeLessThanOrEqual(1);
    expect(existsSync(result.plot)).toBe(true);
    expect(readFileSync(result.plot, 'utf8')).toContain('<svg');
    expect(result.policies.adaptive.runs[0].metrics.states_causal_auc).toBeGreaterThan(0);

    // The same comparison merged with itself pools the runs: two per policy, no campaign run.
    const dir = (jsonOf(r) as { dir: string }).dir;
    const merged = await mallory(['compare', '--from', dir, '--from', dir, '--store', box.store], box);
    expect(merged.code).toBe(0);
    expect(merged.stdout).toMatch(/states_causal\s+adaptive/);
    expect(merged.stdout).toContain('compare.json');
    const pooled = JSON.parse(readFileSync(merged.stdout.match(/data: (\S+compare\.json)/)![1], 'utf8')) as {
      policies: Record<string, { runs: unknown[] }>;
    };
    expect(pooled.policies.random.runs).toHaveLength(2);
  });

  it('runs a transactional workload in every campaign and records it (list-append on kvraft)', async () => {
    const r = await mallory(
      [
        'compare',
        '--workload',
        'list-append',
        '--runs',
        '1',
        '--time',
        '10s',
        '--seed',
        '5',
        '--store',
        box.store,
        '--json',
      ],
      box,
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('workload list-append');
    const result = jsonOf(r) as {
      workload: string;
      dir: string;
      policies: Record<string, { runs: { runDir: string }[] }>;
    };
    expect(result.workload).toBe('list-append');
    for (const policy of ['adaptive', 'random']) {
      const history = readFileSync(join(result.policies[policy].runs[0].runDir, 'history.jsonl'), 'utf8');
      expect(history).toMatch(/"f":"txn".*"append"/);
    }
    // Comparisons of different workloads are not pooled.
    const other = JSON.parse(readFileSync(join(result.dir, 'compare.json'), 'utf8')) as Record<
      string,
      unknown
    >;
    const registerFile = join(box.store, '..', 'register-compare.json');
    writeFileSync(registerFile, JSON.stringify({ ...other, workload: 'register' }));
    const merged = await mallory(
      ['compare', '--from', result.dir, '--from', registerFile, '--store', box.store],
      box,
    );
    expect(merged.code).toBe(2);
    expect(merged.stderr).toContain('only like comparisons can be merged');
  });

  it('refuses a transactional workload on a system without transactions, before it starts a node or a run dir', async () => {
    const r = await mallory(
      [
        'compare',
        '--system',
        'examples/tiny-kv/system.ts',
        '--workload',
        'rw-register',
        '--store',
        box.store,
      ],
      box,
    );
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('does not run rw-register transactions');
    expect(existsSync(join(box.store, 'tiny-kv'))).toBe(false);
  });

  it('refuses a single policy', async () => {
    const r = await mallory(['compare', '--policies', 'adaptive', '--store', box.store], box);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('at least two policies');
  });

  it('Ctrl-C to its whole process group stops it interrupted, exit 130, the nodes the signal reached no crash', async () => {
    // A store of its own: the histories of the tests before it must not count as this one under way.
    const store = join(box.store, 'ctrl-c');
    const child = spawn(
      process.execPath,
      [BIN, 'compare', '--runs', '1', '--time', '60s', '--seed', '3', '--store', store, '--json'],
      { env: box.env, cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'], detached: true },
    );
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.stdout.resume();
    const exited = new Promise<number | null>((resolve) => child.once('close', resolve));
    const pid = child.pid ?? 0;
    // Under way: its first campaign's nodes serve and the nemesis has begun its schedule.
    await waitFor(() => historiesUnder(store).some((h) => h.includes('"process":"nemesis"')), 60_000);
    expect(descendantsOf(pid).length).toBeGreaterThanOrEqual(3);
    // The nodes first: their exits reach the fuzzer before its own signal does.
    for (const node of descendantsOf(pid)) process.kill(node, 'SIGINT');
    process.kill(-pid, 'SIGINT');
    let timer: NodeJS.Timeout | undefined;
    const code = await Promise.race([
      exited,
      new Promise<'still running'>((resolve) => {
        timer = setTimeout(() => {
          resolve('still running');
        }, STOP_BOUND_MS);
      }),
    ]);
    clearTimeout(timer);
    if (code === 'still running') {
      process.kill(-pid, 'SIGKILL');
      await mallory(['cleanup'], box);
    }
    expect(code, stderr).toBe(130);
    expect(stderr).toMatch(/compare: adaptive seed 3: interrupted, \d+ states, 0 bugs/);
    expect(stderr).not.toMatch(/compare: \S+ seed \d+: \w+, \d+ states, [1-9]\d* bugs/);
  });
});
