import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

import { afterAll, describe, expect, it } from 'vitest';

import { keepPlugins } from '../../src/campaign/plugin-copies.js';
import { formatBugSchedule, readScheduleHeader } from '../../src/campaign/schedule-file.js';
import { REPO_ROOT } from '../check/data-dir.js';

const MALLORY = path.join(REPO_ROOT, 'bin', 'mallory.js');
const STACK_LINE = /^\s+at /m;
const KVRAFT = path.join(REPO_ROOT, 'dist', 'systems', 'kvraft', 'index.js');

/** A user's system module: the built-in kvraft under its own name (absolute imports, so a copy loads too). */
const PLUGIN = `import { kvraft } from ${JSON.stringify(KVRAFT)};
export const system = {
  name: 'kvplug',
  defaultNodes: kvraft.defaultNodes,
  bugs: kvraft.bugs,
  create: (options) => Object.assign(Object.create(kvraft.create(options)), { name: 'kvplug' }),
};
`;

async function mallory(
  cwd: string,
  ...args: string[]
): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [MALLORY, ...args], {
      cwd,
      timeout: 120_000,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

describe("a bug found with a user's system module", () => {
  const root = mkdtempSync(path.join(tmpdir(), 'mallory-plugin-'));
  afterAll(() => {
    rmSync(root, { recursive: true, force: true });
  });
  const plugin = path.join(root, 'mine', 'kvplug.mjs');
  mkdirSync(path.dirname(plugin));
  writeFileSync(plugin, PLUGIN);
  const store = path.join(root, 'store');
  const bugDir = path.join(store, 'kvplug', 'run1', 'bugs', '0');
  mkdirSync(bugDir, { recursive: true });
  const plugins = keepPlugins(bugDir, [
    { flag: 'system', source: plugin },
    { flag: 'workload', source: 'register' },
  ]);
  writeFileSync(
    path.join(bugDir, 'schedule.jsonl'),
    formatBugSchedule(
      {
        system: plugin,
        nodes: 3,
        seed: 1,
        bugs: [],
        workload: 'register',
        rate: 20,
        steps: 1,
        stepMs: 1000,
        network: 'proxy',
        schedule: 0,
        finding: { kind: 'history', name: 'linearizable' },
        plugins,
      },
      [{ atMs: 0, f: 'kill', value: 'one' }],
    ),
  );
  const elsewhere = path.join(root, 'elsewhere');
  mkdirSync(elsewhere);
  const runs = (): string[] => readdirSync(path.join(store, 'kvplug')).filter((d) => d !== 'latest');

  it('keeps the module in the bug record: its path, its content hash and a copy', () => {
    expect(plugins).toEqual([
      {
        flag: 'system',
        path: plugin,
        sha256: expect.stringMatching(/^[0-9a-f]{64}$/) as string,
        copy: 'plugins/system-kvplug.mjs',
      },
    ]);
    expect(readScheduleHeader(path.join(bugDir, 'schedule.jsonl'))?.plugins).toEqual(plugins);
  });

  it("replays into the bug's own store, wherever it is run from", async () => {
    const { code, stderr } = await mallory(elsewhere, 'replay', bugDir);
    expect(stderr).not.toMatch(STACK_LINE);
    expect(code).toBe(0);
    expect(runs()).toHaveLength(2);
    expect(existsSync(path.join(elsewhere, 'store'))).toBe(false);
  });

  it('refuses in one line a module changed since the bug was found; --recorded-plugins runs the copy', async () => {
    // The edit breaks the module: only the recorded copy can run.
    writeFileSync(plugin, `${PLUGIN}throw new Error('edited after the bug');\n`);
    const before = runs().length;
    const refused = await mallory(elsewhere, 'replay', bugDir);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(
      new RegExp(
        `^mallory: --system ${plugin.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} changed \\(sha256 [0-9a-f]{12} then, [0-9a-f]{12} now\\) since the bug was recorded: restore it, or replay the bug's copy with --recorded-plugins \\(${path.join(bugDir, 'plugins', 'system-kvplug.mjs').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\)\\n$`,
      ),
    );
    expect(runs()).toHaveLength(before);
    const copied = await mallory(elsewhere, 'replay', bugDir, '--recorded-plugins');
    expect(copied.stderr).not.toMatch(STACK_LINE);
    expect(copied.code).toBe(0);
    expect(runs()).toHaveLength(before + 1);
  });
});
