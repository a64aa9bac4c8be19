import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { run } from '../../src/core/exec.js';
import { SSHD, sshHostsUnavailable } from '../_helpers/ssh-hosts.js';
import { disposeSandbox, mallory, REPO, registryFiles, sandbox, type Sandbox } from './helpers.js';

const unavailable = sshHostsUnavailable();

async function namespaces(): Promise<string[]> {
  return (await run(['ip', 'netns', 'list'])).stdout
    .split('\n')
    .map((l) => l.split(' ')[0])
    .filter((n) => n !== '');
}

/** Whether process `pid` runs (a zombie waiting for init to reap it runs no more). */
function running(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0] !== 'Z';
  } catch {
    return false;
  }
}

describe.skipIf(unavailable !== undefined)('SSH test hosts of a killed test process', () => {
  const boxes: Sandbox[] = [];
  afterAll(() => {
    for (const b of boxes) disposeSandbox(b);
  });

  it('are removed by mallory cleanup: namespaces, sshd processes and their dir', async () => {
    const box = sandbox();
    boxes.push(box);
    const dir = mkdtempSync('/var/tmp/mallory-ssh-hosts-');
    const id = `kill${process.pid}`;
    // A child makes two hosts as useSshHosts does, says what it made, and is killed before its afterAll.
    const script = [
      `import { makeSshHosts, sshHostsRegistry } from ${JSON.stringify(join(REPO, 'test/_helpers/ssh-hosts.ts'))};`,
      `import { join } from 'node:path';`,
      `const registry = sshHostsRegistry(${JSON.stringify(id)}, ${JSON.stringify(dir)});`,
      `const hosts = await makeSshHosts(2, join(${JSON.stringify(dir)}, 'keys'), registry, ${JSON.stringify(id)});`,
      `const made = { namespaces: [0, 1].map((i) => hosts.namespace(i)) };`,
      `process.stdout.write(JSON.stringify(made), () => process.kill(process.pid, 'SIGKILL'));`,
    ].join('\n');
    const env: NodeJS.ProcessEnv = { ...box.env };
    delete env.VITEST;
    const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: REPO,
      env,
      encoding: 'utf8',
    });
    expect(child.signal, child.stderr).toBe('SIGKILL');
    const made = JSON.parse(child.stdout) as { namespaces: string[] };
    const sshds: number[] = [];
    for (const ns of made.namespaces) {
      const pids = (await run(['ip', 'netns', 'pids', ns])).stdout.split('\n').filter((p) => p !== '');
      expect(pids, `processes in ${ns}`).toHaveLength(1);
      expect(readFileSync(`/proc/${pids[0]}/cmdline`, 'utf8')).toContain(SSHD);
      sshds.push(Number(pids[0]));
    }
    expect(made.namespaces).toHaveLength(2);
    const left = await namespaces();
    for (const ns of made.namespaces) expect(left).toContain(ns);
    // The hosts' namespaces and their hub's: `mallory-<hash>-h1`, `-h2`, `-hub`.
    const prefix = made.namespaces[0].replace(/h1$/, '');
    expect(left.filter((n) => n.startsWith(prefix)).sort()).toEqual(
      [...made.namespaces, `${prefix}hub`].sort(),
    );
    for (const pid of sshds) expect(running(pid), `sshd ${pid}`).toBe(true);
    expect(existsSync(dir)).toBe(true);
    expect(registryFiles(box)).toEqual([`ssh-hosts-${id}.jsonl`]);

    const cleanup = await mallory(['cleanup'], box);

    expect(cleanup.code, cleanup.stderr).toBe(0);
    expect((await namespaces()).filter((n) => n.startsWith(prefix))).toEqual([]);
    for (const pid of sshds) expect(running(pid), `sshd ${pid}`).toBe(false);
    expect(existsSync(dir)).toBe(false);
    expect(registryFiles(box)).toEqual([]);
  });
});
