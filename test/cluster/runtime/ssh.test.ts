import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { cleanupRegistries, ResourceRegistry } from '../../../src/cluster/resources.js';
import { followFile } from '../../../src/cluster/runtime/follow.js';
import { type SshTarget, SshRuntime } from '../../../src/cluster/runtime/ssh.js';
import { hostLeftovers, makeSshHosts, type SshHosts, sshHostsUnavailable } from '../../_helpers/ssh-hosts.js';
import { waitUntil } from './_helpers/wait-until.js';
import { mkdirOn, uploadTo } from '../../../src/cluster/runtime/files.js';

const unavailable = sshHostsUnavailable();
const CONCURRENT_COMMANDS = 30;

describe.skipIf(unavailable !== undefined)(
  `SshRuntime against sshd hosts${unavailable ? ` (skipped: ${unavailable})` : ''}`,
  () => {
    let root: string;
    let registry: ResourceRegistry;
    let hosts: SshHosts;
    const target = (i: number, over: Partial<SshTarget> = {}): SshTarget => ({
      host: hosts.addresses[i],
      port: 22,
      username: 'root',
      privateKey: hosts.privateKey,
      knownHosts: hosts.knownHosts,
      strictHostKeyChecking: 'yes',
      ...over,
    });

    beforeAll(async () => {
      root = mkdtempSync(join(tmpdir(), 'mallory-ssh-test-'));
      process.env.MALLORY_STATE_DIR = join(root, 'state');
      registry = new ResourceRegistry(`sshtest${process.pid}`);
      hosts = await makeSshHosts(2, join(root, 'keys'), registry, `sshtest${process.pid}`);
    });

    afterAll(async () => {
      await hosts.close();
      registry.releaseAll();
      delete process.env.MALLORY_STATE_DIR;
      rmSync(root, { recursive: true, force: true });
    });

    it('runs commands in the host (its own network namespace), bounded to fewer channels than sshd allows', async () => {
      const host = await SshRuntime.connect(target(0));
      try {
        const addresses = await host.exec(['ip', '-4', '-o', 'addr', 'show', 'eth0']);
        expect(addresses.stdout).toContain(hosts.addresses[0]);
        // More at once than OpenSSH's MaxSessions (10): every one gets its channel in turn.
        const results = await Promise.all(
          Array.from({ length: CONCURRENT_COMMANDS }, (_, i) => host.exec(['echo', String(i)])),
        );
        expect(results.map((r) => r.stdout.trim())).toEqual(
          Array.from({ length: CONCURRENT_COMMANDS }, (_, i) => String(i)),
        );
        expect((await host.exec(['sh', '-c', 'exit 3'])).code).toBe(3);
        // Short commands run on a shell kept open (no new SSH session each): one after another,
        // they share their session's sshd process; a command's exit and cd stay its own.
        const sessions = new Set<string>();
        for (let i = 0; i < 5; i++) sessions.add((await host.shell('echo $PPID')).stdout.trim());
        expect(sessions.size).toBe(1);
        expect((await host.shell('cd /; exit 4')).code).toBe(4);
        expect((await host.shell('pwd')).stdout.trim()).not.toBe('/');
        // A command given stdin reads it to its end (binary-safe), on a channel of its own.
        const bytes = Buffer.from([0, 1, 255, 10]);
        expect((await host.exec(['od', '-An', '-tx1'], { input: bytes })).stdout.trim()).toBe('00 01 ff 0a');
        expect(await host.exec(['sh', '-c', 'cat; exit 5'], { input: 'in\n' })).toMatchObject({
          code: 5,
          stdout: 'in\n',
        });
      } finally {
        await host.close();
      }
    });

    it('uploads a file with its mode, and a file onto itself (a host sharing these files) stays whole', async () => {
      const host = await SshRuntime.connect(target(0));
      try {
        const local = join(root, 'script.sh');
        writeFileSync(local, '#!/bin/sh\necho uploaded\n', { mode: 0o750 });
        const there = join(root, 'copy', 'script.sh');
        await mkdirOn(host, join(root, 'copy'));
        await uploadTo(host, local, there);
        expect((await host.exec([there])).stdout).toBe('uploaded\n');
        expect((await host.exec(['stat', '-c', '%a', there])).stdout.trim()).toBe('750');
        // These test hosts see this machine's files: the same path on both is one file.
        await uploadTo(host, local, local);
        expect(readFileSync(local, 'utf8')).toBe('#!/bin/sh\necho uploaded\n');
        expect((await host.exec(['ls', join(root, 'copy')])).stdout.trim()).toBe('script.sh');
      } finally {
        await host.close();
      }
    });

    it('starts a process group, stops and continues it, streams its output, and hears it die', async () => {
      const host = await SshRuntime.connect(target(1));
      try {
        const dir = join(root, 'proc');
        await mkdirOn(host, dir);
        const proc = await host.start(
          {
            argv: ['sh', '-c', 'echo "$GREETING"; while :; do date +%s%N; sleep 0.05; done'],
            env: { GREETING: 'hello from the host' },
            cwd: dir,
            stdout: join(dir, 'stdout.log'),
            stderr: join(dir, 'stderr.log'),
            label: 'ticker',
          },
          registry,
        );
        const chunks: Buffer[] = [];
        const stream = followFile(host, join(dir, 'stdout.log'), (chunk) => chunks.push(chunk));
        await waitUntil(
          () => Buffer.concat(chunks).toString().startsWith('hello from the host\n'),
          'the greeting streamed',
        );
        const state = async (): Promise<string> =>
          (await host.exec(['sh', '-c', `cut -d' ' -f3 /proc/${proc.pid}/stat`])).stdout.trim();
        await host.signal(proc, 'SIGSTOP');
        await waitUntil(async () => (await state()) === 'T', 'the group stopped');
        await host.signal(proc, 'SIGCONT');
        await waitUntil(async () => (await state()) !== 'T', 'the group continued');
        await host.signal(proc, 'SIGKILL');
        expect(await proc.exited).toEqual({ code: null, signal: 'SIGKILL' });
        await stream.stop();
        expect(Buffer.concat(chunks).toString()).toBe(readFileSync(join(dir, 'stdout.log'), 'utf8'));

        const exits = await host.start(
          {
            argv: ['sh', '-c', 'exit 7'],
            env: {},
            cwd: dir,
            stdout: join(dir, 'o'),
            stderr: join(dir, 'e'),
            label: 'x',
          },
          registry,
        );
        expect(await exits.exited).toEqual({ code: 7, signal: null });
      } finally {
        await host.close();
      }
    });

    it('leaves a process group that `mallory cleanup` ends after the fuzzer is gone', async () => {
      const stateDir = join(root, 'crashed-state');
      process.env.MALLORY_STATE_DIR = stateDir;
      const crashed = new ResourceRegistry(`sshcrash${process.pid}`);
      process.env.MALLORY_STATE_DIR = join(root, 'state');
      const host = await SshRuntime.connect(target(0));
      const dir = join(root, 'crash');
      await mkdirOn(host, dir);
      const proc = await host.start(
        {
          argv: ['sleep', '300'],
          env: {},
          cwd: dir,
          stdout: join(dir, 'o'),
          stderr: join(dir, 'e'),
          label: 'sleeper',
        },
        crashed,
      );
      // The fuzzer "dies": its registry's owner line names a pid that is not alive.
      const file = crashed.file;
      const lines = readFileSync(file, 'utf8').split('\n');
      const owner = JSON.parse(lines[0]) as { pid: number; startTime: string };
      writeFileSync(file, [JSON.stringify({ ...owner, startTime: 'gone' }), ...lines.slice(1)].join('\n'));
      const alive = async (): Promise<boolean> =>
        (await host.exec(['kill', '-0', String(proc.pid)])).code === 0;
      expect(await alive()).toBe(true);

      process.env.MALLORY_STATE_DIR = stateDir;
      const report = cleanupRegistries();
      process.env.MALLORY_STATE_DIR = join(root, 'state');

      expect(report.runs[0].resources).toEqual([
        `process group ${proc.pid} on ${hosts.addresses[0]} (sleeper)`,
      ]);
      expect(await proc.exited).toEqual({ code: null, signal: 'SIGKILL' });
      expect(await alive()).toBe(false);
      await host.close();
    });

    it('checks host keys: refuses an unknown host, accepts it on first use when asked, and refuses a changed key', async () => {
      const empty = join(root, 'empty_known_hosts');
      await expect(SshRuntime.connect(target(0, { knownHosts: empty }))).rejects.toThrow(
        `host ${hosts.addresses[0]}: its host key is not in ${empty}: add it (ssh-keyscan -p 22 ${hosts.addresses[0]} >> ${empty}) or pass --strict-host-key-checking accept-new`,
      );
      const host = await SshRuntime.connect(
        target(0, { knownHosts: empty, strictHostKeyChecking: 'accept-new' }),
      );
      await host.close();
      expect(readFileSync(empty, 'utf8')).toMatch(
        new RegExp(`^${hosts.addresses[0].replace(/\./g, '\\.')} ssh-ed25519 `),
      );
      // Host 2's key under host 1's name: a changed key, refused even with accept-new.
      const other = readFileSync(hosts.knownHosts, 'utf8').split('\n')[1].split(' ').slice(1).join(' ');
      const wrong = join(root, 'wrong_known_hosts');
      writeFileSync(wrong, `${hosts.addresses[0]} ${other}\n`);
      await expect(
        SshRuntime.connect(target(0, { knownHosts: wrong, strictHostKeyChecking: 'accept-new' })),
      ).rejects.toThrow(/its ssh-ed25519 host key is not the one .* holds for it/);
    });

    it('says which host refused the connection or the key, and what to do', async () => {
      const stranger = join(root, 'stranger');
      const { run } = await import('../../../src/core/exec.js');
      await run(['ssh-keygen', '-q', '-t', 'ed25519', '-N', '', '-f', stranger]);
      await expect(SshRuntime.connect(target(1, { privateKey: stranger }))).rejects.toThrow(
        `host ${hosts.addresses[1]}: the key was rejected for user root: add its public key to ~root/.ssh/authorized_keys there, or give the right --ssh-private-key / --username`,
      );
      await expect(SshRuntime.connect(target(1, { port: 2222 }))).rejects.toThrow(
        `host ${hosts.addresses[1]}: connection refused on port 2222: start sshd there, or give the port it listens on (--ssh-port)`,
      );
    });

    /** Whether host i runs nothing but its sshd (its sessions' shells and what they run are gone). */
    const onlySshd = async (i: number): Promise<boolean> =>
      (await hostLeftovers(hosts, i)).every((l) => !l.startsWith('process'));

    it('a command that outlives its timeout is killed with its shell: it never takes effect later', async () => {
      const late = join(root, 'late-slow');
      const host = await SshRuntime.connect(target(1));
      try {
        const r = await host.shell(`sleep 3; touch ${late}`, 500);
        expect(r.code).toBe(124);
        expect(r.stderr).toContain('timed out after 500 ms');
      } finally {
        await host.close();
      }
      await waitUntil(() => onlySshd(1), 'the timed-out command to end on the host');
      expect(existsSync(late)).toBe(false);
    });

    it('a command held back by a cut link until past its timeout does nothing when it arrives', async () => {
      const late = join(root, 'late-cut');
      const host = await SshRuntime.connect(target(1));
      const cut = ['INPUT', '-p', 'tcp', '--dport', '22', '-j', 'DROP'];
      try {
        expect((await host.shell('true')).code).toBe(0);
        expect((await hosts.inHost(1, ['iptables', '-I', ...cut])).code).toBe(0);
        const r = await host.shell(`touch ${late}`, 1000);
        expect(r.code).toBe(124);
        expect((await hosts.inHost(1, ['iptables', '-D', ...cut])).code).toBe(0);
        // The connection stays up, as a run's does: the shell the command was queued on reads it
        // once TCP delivers it, then ends (its channel was closed after the timeout).
        await waitUntil(
          () => onlySshd(1),
          'the queued command to reach the host and its shell to end',
          30_000,
        );
      } finally {
        await hosts.inHost(1, ['iptables', '-D', ...cut]);
        await host.close();
      }
      expect(existsSync(late)).toBe(false);
    });
  },
);
