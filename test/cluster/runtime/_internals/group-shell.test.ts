import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import {
  groupStartScript,
  GroupStartReader,
} from '../../../../src/cluster/runtime/_internals/group-shell.js';

const dir = mkdtempSync(join(tmpdir(), 'mallory-group-shell-'));
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('the start script shared by the SSH and docker runtimes', () => {
  it('says the group leader pid and start time (also in the pid file), runs the node with its env and output files, and says its exit last', () => {
    const pidFile = join(dir, '.pid');
    const script = groupStartScript(
      {
        argv: ['sh', '-c', 'echo "$WHO out"; echo err >&2; exit 3'],
        env: { WHO: 'n 1' },
        cwd: dir,
        stdout: join(dir, 'stdout.log'),
        stderr: join(dir, 'stderr.log'),
        label: 'n1',
      },
      pidFile,
    );
    const ran = spawnSync('sh', ['-c', script], { encoding: 'utf8' });
    const said = new GroupStartReader();
    // In pieces, as a channel delivers it.
    for (const piece of ran.stdout.match(/[\s\S]{1,3}/g) ?? []) said.feed(piece);
    expect(said.started?.pid).toBeGreaterThan(0);
    expect(readFileSync(pidFile, 'utf8').trim()).toBe(`${said.started?.pid} ${said.started?.start}`);
    expect(said.ending()).toEqual({ code: 3, signal: null });
    expect(readFileSync(join(dir, 'stdout.log'), 'utf8')).toBe('n 1 out\n');
    expect(readFileSync(join(dir, 'stderr.log'), 'utf8')).toBe('err\n');
  });

  it('reads whole lines only, a status above 128 as the signal that ended the node, and no whole exit line as the group killed', () => {
    const killed = new GroupStartReader();
    killed.feed('pid 42 12');
    expect(killed.started).toBeUndefined();
    killed.feed('34\nexit 14');
    expect(killed.end).toBeUndefined();
    killed.feed('3\n');
    expect(killed.started).toEqual({ pid: 42, start: '1234' });
    expect(killed.ending()).toEqual({ code: null, signal: 'SIGTERM' });
    const cut = new GroupStartReader();
    cut.feed('pid 42 1234\nexit 1');
    expect(cut.end).toBeUndefined();
    expect(cut.ending()).toEqual({ code: null, signal: 'SIGKILL' });
  });
});
