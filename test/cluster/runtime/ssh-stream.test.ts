import { appendFileSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { ResourceRegistry } from '../../../src/cluster/resources.js';
import { followFile } from '../../../src/cluster/runtime/follow.js';
import { type SshTarget, SshRuntime } from '../../../src/cluster/runtime/ssh.js';
import { makeSshHosts, type SshHosts, sshHostsUnavailable } from '../../_helpers/ssh-hosts.js';
import { waitUntil } from './_helpers/wait-until.js';

const unavailable = sshHostsUnavailable();
const SMALL_WRITES = 300;
const BYTE_VALUES = 256;

/** The host's processes whose command line names `needle`: pid, process group and argv. */
async function processesNaming(
  host: SshRuntime,
  needle: string,
): Promise<{ pid: number; pgid: number; args: string }[]> {
  const ps = await host.exec(['ps', '-eo', 'pid=,pgid=,args=']);
  return ps.stdout
    .split('\n')
    .map((line) => /^\s*(\d+)\s+(\d+)\s+(.*)$/.exec(line))
    .filter((m): m is RegExpExecArray => m !== null && m[3].includes(needle) && !m[3].startsWith('ps '))
    .map((m) => ({ pid: Number(m[1]), pgid: Number(m[2]), args: m[3] }));
}

async function tailsOf(host: SshRuntime, path: string): Promise<{ pid: number; pgid: number }[]> {
  return (await processesNaming(host, path)).filter((p) => p.args.startsWith('tail '));
}

describe.skipIf(unavailable !== undefined)(
  `followFile over SSH: files followed by tail over SSH${unavailable ? ` (skipped: ${unavailable})` : ''}`,
  () => {
    let root: string;
    let registry: ResourceRegistry;
    let hosts: SshHosts;
    const target = (): SshTarget => ({
      host: hosts.addresses[0],
      port: 22,
      username: 'root',
      privateKey: hosts.privateKey,
      knownHosts: hosts.knownHosts,
      strictHostKeyChecking: 'yes',
    });

    beforeAll(async () => {
      root = mkdtempSync(join(tmpdir(), 'mallory-ssh-stream-test-'));
      process.env.MALLORY_STATE_DIR = join(root, 'state');
      registry = new ResourceRegistry(`sshstream${process.pid}`);
      hosts = await makeSshHosts(1, join(root, 'keys'), registry, `sshstream${process.pid}`);
    });

    afterAll(async () => {
      await hosts.close();
      registry.releaseAll();
      delete process.env.MALLORY_STATE_DIR;
      rmSync(root, { recursive: true, force: true });
    });

    // These test hosts see this machine's files: what the test writes is the host's file.
    it('follows a file created late, in many small writes of every byte value, and stop() leaves no tail', async () => {
      const host = await SshRuntime.connect(target());
      try {
        const dir = mkdtempSync(join(root, 'late-'));
        const path = join(dir, 'probe.jsonl');
        const chunks: Buffer[] = [];
        const stream = followFile(host, path, (chunk) => chunks.push(chunk));
        // The file does not exist yet: nothing comes, and the channel waits for it.
        await waitUntil(async () => (await processesNaming(host, path)).length > 0, 'the follower waiting');
        const expected: Buffer[] = [];
        const bytes = Buffer.from(Array.from({ length: BYTE_VALUES }, (_, i) => i));
        writeFileSync(path, bytes);
        expected.push(bytes);
        for (let i = 0; i < SMALL_WRITES; i++) {
          const piece = Buffer.from([i % BYTE_VALUES, 0, 0x0a, 0xff, 0x0d]);
          appendFileSync(path, piece);
          expected.push(piece);
        }
        const all = Buffer.concat(expected);
        await waitUntil(() => Buffer.concat(chunks).equals(all), 'every byte, in order, once');
        expect(await tailsOf(host, path)).toHaveLength(1);
        // Written just before stop: still delivered, nothing after.
        appendFileSync(path, 'last\n');
        await stream.stop();
        expect(Buffer.concat(chunks).equals(Buffer.concat([all, Buffer.from('last\n')]))).toBe(true);
        expect(await processesNaming(host, path)).toEqual([]);
        await stream.stop();
      } finally {
        await host.close();
      }
    });

    it('after a truncation goes on from the file’s new start; after a rotation follows the new file', async () => {
      const host = await SshRuntime.connect(target());
      try {
        const dir = mkdtempSync(join(root, 'trunc-'));
        const path = join(dir, 'stdout.log');
        writeFileSync(path, 'before the truncation\n');
        let got = '';
        const stream = followFile(host, path, (chunk) => (got += chunk.toString()));
        await waitUntil(() => got === 'before the truncation\n', 'the first bytes');
        writeFileSync(path, 'new\n');
        await waitUntil(() => got === 'before the truncation\nnew\n', 'the bytes after the truncation');
        renameSync(path, `${path}.1`);
        writeFileSync(path, 'rotated\n');
        await waitUntil(
          () => got === 'before the truncation\nnew\nrotated\n',
          'the new file after the rotation',
        );
        await stream.stop();
        expect(await processesNaming(host, path)).toEqual([]);
      } finally {
        await host.close();
      }
    });

    it('follows two files asked for together on one channel, each stopped on its own', async () => {
      const host = await SshRuntime.connect(target());
      try {
        const dir = mkdtempSync(join(root, 'pair-'));
        const [a, b] = [join(dir, 'stdout.log'), join(dir, 'stderr.log')];
        writeFileSync(a, 'a1\n');
        writeFileSync(b, 'b1\n');
        let gotA = '';
        let gotB = '';
        const streamA = followFile(host, a, (chunk) => (gotA += chunk.toString()));
        const streamB = followFile(host, b, (chunk) => (gotB += chunk.toString()));
        await waitUntil(() => gotA === 'a1\n' && gotB === 'b1\n', 'both files');
        const [tailA, tailB] = [(await tailsOf(host, a))[0], (await tailsOf(host, b))[0]];
        expect(tailA.pgid).toBe(tailB.pgid);
        appendFileSync(a, 'a2\n');
        await streamA.stop();
        expect(gotA).toBe('a1\na2\n');
        expect(await tailsOf(host, a)).toEqual([]);
        appendFileSync(a, 'a3\n');
        appendFileSync(b, 'b2\n');
        await waitUntil(() => gotB === 'b1\nb2\n', 'the other file still followed');
        await streamB.stop();
        expect(gotA).toBe('a1\na2\n');
        expect(await processesNaming(host, dir)).toEqual([]);
      } finally {
        await host.close();
      }
    });

    it('records its tail in the run’s registry: cleanup ends it; a closed connection ends it too', async () => {
      const runRegistry = new ResourceRegistry(`sshstreamrun${process.pid}`);
      const host = await SshRuntime.connect(target());
      try {
        const dir = mkdtempSync(join(root, 'rec-'));
        const path = join(dir, 'stdout.log');
        writeFileSync(path, 'x\n');
        let got = '';
        const stream = followFile(host, path, (chunk) => (got += chunk.toString()), runRegistry);
        await waitUntil(() => got === 'x\n', 'the file');
        await waitUntil(
          () => readFileSync(runRegistry.file, 'utf8').includes(`(${path})`),
          'the tail recorded',
        );
        // What `mallory cleanup` does with a killed run's registry.
        runRegistry.releaseResources();
        expect(await processesNaming(host, path)).toEqual([]);
        await stream.stop();

        const other = join(dir, 'other.log');
        followFile(host, other, () => undefined, runRegistry);
        await waitUntil(async () => (await processesNaming(host, other)).length > 0, 'the second follower');
        const checker = await SshRuntime.connect(target());
        try {
          await host.close();
          await waitUntil(
            async () => (await processesNaming(checker, other)).length === 0,
            'the follower gone with its connection',
          );
        } finally {
          await checker.close();
        }
      } finally {
        await host.close();
        runRegistry.releaseAll();
      }
    });
  },
);
