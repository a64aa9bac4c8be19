import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';

import { afterEach, describe, expect, it } from 'vitest';

import { type ShellChannel, ShellSession } from '../../../../src/cluster/runtime/_internals/shell-session.js';

/** A real `sh` as the session's shell (over SSH it is the host's, on an exec channel). */
function localShell(): { channel: ShellChannel; child: ChildProcessWithoutNullStreams } {
  const child = spawn('sh', [], { stdio: 'pipe' });
  const channel: ShellChannel = {
    write: (text) => {
      child.stdin.write(text);
    },
    onStdout: (l) => {
      child.stdout.on('data', l);
    },
    onStderr: (l) => {
      child.stderr.on('data', l);
    },
    onClose: (l) => {
      child.on('close', l);
    },
    close: () => {
      child.kill('SIGKILL');
    },
  };
  return { channel, child };
}

describe('ShellSession (one shell kept open, one command at a time)', () => {
  const children: ChildProcessWithoutNullStreams[] = [];
  afterEach(() => {
    for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  });
  function session(): ShellSession {
    const { channel, child } = localShell();
    children.push(child);
    return new ShellSession(channel);
  }

  it('answers each command with its own stdout, stderr and exit status, exactly', async () => {
    const s = session();
    expect(await s.run('echo one; echo two >&2; exit 3', 5000)).toEqual({
      code: 3,
      stdout: 'one\n',
      stderr: 'two\n',
    });
    // Output without a final newline, and an empty one, come back as they were.
    expect(await s.run("printf 'a\\nb'", 5000)).toEqual({ code: 0, stdout: 'a\nb', stderr: '' });
    expect(await s.run('true', 5000)).toEqual({ code: 0, stdout: '', stderr: '' });
    expect(await s.run('printf "é€"', 5000)).toMatchObject({ stdout: 'é€' });
    // Text that looks like a marker of another command is only output.
    expect((await s.run('echo __mallory_0_1 0', 5000)).stdout).toBe('__mallory_0_1 0\n');
  });

  it("keeps a command's exit, cd and variables to itself, and gives it an empty stdin", async () => {
    const s = session();
    await s.run('cd /tmp; X=1; exit 7', 5000);
    expect(s.alive).toBe(true);
    expect(await s.run('pwd; echo "x=$X"', 5000)).toMatchObject({
      code: 0,
      stdout: `${process.cwd()}\nx=\n`,
    });
    // `cat` reads end of file at once: the command does not eat the session's next lines.
    expect(await s.run('cat; echo after', 5000)).toEqual({ code: 0, stdout: 'after\n', stderr: '' });
  });

  it('runs one command at a time: a second while one runs is refused, and idle says when it may', async () => {
    const s = session();
    const first = s.run('sleep 0.2; echo done', 5000);
    expect(s.idle).toBe(false);
    expect(() => s.run('true', 5000)).toThrow(/busy/);
    expect((await first).stdout).toBe('done\n');
    expect(s.idle).toBe(true);
  });

  it('ends the session when a command outlives its timeout, and answers a command whose shell ended', async () => {
    const s = session();
    const timedOut = await s.run('sleep 2', 200);
    expect(timedOut).toEqual({ code: 124, stdout: '', stderr: 'timed out after 200 ms' });
    expect(s.alive).toBe(false);
    expect(s.idle).toBe(false);

    const t = session();
    const ended = await t.run('kill -KILL $$', 5000);
    expect(ended.code).toBe(255);
    expect(ended.stderr).toBe('the shell on the host ended');
    expect(t.alive).toBe(false);
  });
});
