import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { fencedBlocks } from '../_helpers/markdown.js';
import { BIN, REPO } from './helpers.js';

/** The commands of docs/tutorial.md that CI runs, in order: its blocks marked `sh tutorial`. */
const COMMANDS = fencedBlocks(readFileSync(join(REPO, 'docs', 'tutorial.md'), 'utf8'))
  .filter((b) => b.info === 'sh tutorial')
  .map((b) => b.body)
  .join('');

interface Shell {
  readonly code: number | null;
  readonly output: string;
}

/** Runs `script` in bash in `cwd` with `env`, its stdout and stderr together. */
function bash(script: string, cwd: string, env: NodeJS.ProcessEnv): Promise<Shell> {
  return new Promise((resolve) => {
    const child = spawn('bash', ['-c', script], { cwd, env });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.on('close', (code) => {
      resolve({ code, output });
    });
  });
}

describe('docs/tutorial.md, run as a reader would (a new project outside the repository)', () => {
  const root = mkdtempSync(join(tmpdir(), 'mallory-tutorial-'));
  const env = {
    ...process.env,
    MALLORY_DIR: REPO,
    MALLORY_STATE_DIR: join(root, 'state'),
    // npm's cache and config stay in the temp dir: nothing of the test is left in $HOME.
    npm_config_cache: join(root, 'npm-cache'),
    npm_config_userconfig: join(root, 'npmrc'),
    npm_config_update_notifier: 'false',
  };
  afterAll(async () => {
    // Whatever a failed campaign left (its nodes), then the files.
    await bash(`${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)} cleanup`, root, env);
    rmSync(root, { recursive: true, force: true });
  });

  it('installs mallory into the project by a file: dependency and records a campaign with a verdict', async () => {
    expect(realpathSync(root).startsWith(realpathSync(REPO))).toBe(false);
    const shell = await bash(`set -euo pipefail\n${COMMANDS}`, root, env);
    expect(shell.output, shell.output.slice(-3000)).toContain('mallory: complete after');
    expect(shell.code, shell.output.slice(-3000)).toBe(0);

    const project = join(root, 'my-kv');
    // `import … from 'mallory'` resolved through the project's own node_modules, a link to this checkout.
    expect(realpathSync(join(project, 'node_modules', 'mallory'))).toBe(realpathSync(REPO));
    const manifest = JSON.parse(readFileSync(join(project, 'package.json'), 'utf8')) as {
      devDependencies?: Record<string, string>;
    };
    expect(manifest.devDependencies?.mallory).toMatch(/^file:/);

    const run = realpathSync(join(project, 'store', 'latest'));
    expect(run.startsWith(join(realpathSync(project), 'store', 'my-kv'))).toBe(true);
    const results = JSON.parse(readFileSync(join(run, 'results.json'), 'utf8')) as {
      status: string;
      verdict: { valid: boolean | 'unknown'; checkers: readonly { checker: string; valid: number }[] };
    };
    expect(results.status).toBe('complete');
    expect(results.verdict.valid).toBe(true);
    expect(results.verdict.checkers).toContainEqual(
      expect.objectContaining({ checker: 'linearizable', valid: 1 }),
    );
    expect(existsSync(join(run, 'report.html'))).toBe(true);
    // The primary's role came from the adapter's log rule (`attrs: { role: 'leader' }`).
    expect(readFileSync(join(run, 'nodes', 'n1', 'roles.jsonl'), 'utf8')).toContain('"role":"leader"');
    // `mallory logs` showed the hex version as the text it was (captured with its 0x).
    expect(shell.output).toMatch(/event stored key=\S+ version=0x[0-9a-f]+/);
  });
});
