import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import { childScanScript, nodePidScript } from '../../src/cluster/_internals/node-pid.js';
import { ControlFiles, controlFileScript } from '../../src/cluster/clock-control-files.js';
import { findLibfaketimeOn, LIBFAKETIME_PATHS, libfaketimeMissing } from '../../src/cluster/clock-preload.js';
import { LOCAL_CAPABILITIES, LocalRuntime } from '../../src/cluster/runtime/local.js';

const runtime = new LocalRuntime();
const dirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'mallory-clock-files-'));
  dirs.push(dir);
  return dir;
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('controlFileScript', () => {
  it('writes the offset whole through a temp file, making the dir, and leaves an existing file with ifMissing', async () => {
    const dir = tempDir();
    const file = join(dir, 'nodes', 'n1', 'clock.faketime');
    const sh = (script: string): Promise<{ code: number }> => runtime.exec(['sh', '-c', script]);
    expect((await sh(controlFileScript(file, -60_000, { mkdir: true }))).code).toBe(0);
    expect(readFileSync(file, 'utf8')).toBe('-60.000\n');
    expect((await sh(controlFileScript(file, 0, { ifMissing: true }))).code).toBe(0);
    expect(readFileSync(file, 'utf8')).toBe('-60.000\n');
    expect((await sh(controlFileScript(file, 1_500))).code).toBe(0);
    expect(readFileSync(file, 'utf8')).toBe('+1.500\n');
    expect(readdirSync(join(dir, 'nodes', 'n1'))).toEqual(['clock.faketime']);
  });
});

describe('ControlFiles', () => {
  it("writes each node's control file under the run's dir on its host, and says a failed write", async () => {
    const root = tempDir();
    const files = new ControlFiles(root, () => runtime);
    expect(files.path('n2')).toBe(join(root, 'nodes', 'n2', 'clock.faketime'));
    await files.write('n2', 0, true);
    expect(readFileSync(files.path('n2'), 'utf8')).toBe('+0.000\n');
    await files.write('n2', 5_000);
    expect(readFileSync(files.path('n2'), 'utf8')).toBe('+5.000\n');

    const blocked = new ControlFiles(join(files.path('n2'), 'not-a-dir'), () => runtime);
    await expect(blocked.write('n1', 0)).rejects.toThrow(
      /^host local: cannot write n1's clock control file .*not-a-dir\/nodes\/n1\/clock\.faketime \(ENOTDIR/,
    );
  });

  it('writes by a command there where the runtime does not share these files, an existing file kept with ifMissing', async () => {
    // This machine's shell, declared as a place with files of its own: the write is the command.
    class Elsewhere extends LocalRuntime {
      override readonly capabilities = { ...LOCAL_CAPABILITIES, sharedFilesystem: false };
    }
    const root = tempDir();
    const files = new ControlFiles(root, () => new Elsewhere());
    expect(files.isHere('n1')).toBe(false);
    await files.write('n1', -1_500);
    await files.write('n1', 0, true);
    expect(readFileSync(files.path('n1'), 'utf8')).toBe('-1.500\n');
    expect(readdirSync(join(root, 'nodes', 'n1'))).toEqual(['clock.faketime']);

    const blocked = new ControlFiles(join(files.path('n1'), 'not-a-dir'), () => new Elsewhere());
    await expect(blocked.write('n1', 0)).rejects.toThrow(
      /^host local: cannot write n1's clock control file .*not-a-dir\/nodes\/n1\/clock\.faketime \(exit \d+/,
    );
  });
});

describe('findLibfaketimeOn', () => {
  it("finds the faketime package's library on the host (CI installs faketime)", async () => {
    const found = await findLibfaketimeOn(runtime);
    expect(LIBFAKETIME_PATHS).toContain(found);
    expect(existsSync(found!)).toBe(true);
  });
});

describe('libfaketimeMissing', () => {
  it('is one line naming the host and the fix there', () => {
    const line = libfaketimeMissing('10.0.0.3');
    expect(line).toBe(
      'host 10.0.0.3: clock faults need libfaketime there (no libfaketime.so.1 in its faketime package paths): apt-get install -y faketime on the host, or drop clock from --faults',
    );
    expect(line).not.toContain('\n');
  });
});

describe('nodePidScript', () => {
  /** Runs `body` with a group leader shell that started one child, given both pids; kills the group after. */
  async function withLeaderShell(body: (leader: number, child: string) => Promise<void>): Promise<void> {
    const leader = spawn('sh', ['-c', 'sleep 30 & echo $!; wait'], {
      stdio: ['ignore', 'pipe', 'ignore'],
      detached: true,
    });
    try {
      const child = await new Promise<string>((resolve) => {
        leader.stdout.once('data', (d: Buffer) => {
          resolve(d.toString().trim());
        });
      });
      await body(leader.pid ?? 0, child);
    } finally {
      // The leader's whole group: its sleep too.
      process.kill(-(leader.pid ?? 0), 'SIGKILL');
    }
  }

  it("prints the pid of the node a group's leader shell started", async () => {
    await withLeaderShell(async (leader, child) => {
      const found = await runtime.exec(['sh', '-c', nodePidScript(leader)]);
      expect(found.code).toBe(0);
      expect(found.stdout.trim()).toBe(child);
    });
  });

  it('finds the child by the parent pid in /proc/<p>/stat too (a kernel without the children file)', async () => {
    await withLeaderShell(async (leader, child) => {
      const found = await runtime.exec(['sh', '-c', `${childScanScript(leader)}; echo "$c"`]);
      expect(found.stdout.trim()).toBe(child);
    });
  });

  it('fails at once for a leader that is gone', async () => {
    const gone = spawn('true');
    await new Promise((resolve) => gone.once('exit', resolve));
    const found = await runtime.exec(['sh', '-c', nodePidScript(gone.pid ?? 0)]);
    expect(found.code).toBe(1);
    expect(found.stdout).toBe('');
  });
});
