import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { ResourceRegistry } from '../../../src/cluster/resources.js';
import { followFile } from '../../../src/cluster/runtime/follow.js';
import { docker, DockerRuntime } from '../../../src/cluster/runtime/docker.js';
import {
  type PrivateDocker,
  privateDockerUnavailable,
  startPrivateDocker,
} from '../../_helpers/private-docker.js';
import { waitUntil } from './_helpers/wait-until.js';
import {
  emptyOn,
  isRunnableOn,
  mkdirOn,
  readFileOn,
  removeOn,
  uploadTo,
  writeFileOn,
} from '../../../src/cluster/runtime/files.js';

const unavailable = privateDockerUnavailable();
const IMAGE = 'mallory-runtime-test:1';

describe.skipIf(unavailable !== undefined)(
  `DockerRuntime against a private dockerd${unavailable ? ` (skipped: ${unavailable})` : ''}`,
  () => {
    let root: string;
    let registry: ResourceRegistry;
    let daemon: PrivateDocker;
    let box: DockerRuntime;

    beforeAll(async () => {
      root = mkdtempSync(join(tmpdir(), 'mdk-'));
      process.env.MALLORY_STATE_DIR = join(root, 'state');
      registry = new ResourceRegistry(`dockertest${process.pid}`);
      daemon = await startPrivateDocker(join(root, 'd'), registry);
      await daemon.buildImage(IMAGE, []);
      const made = await docker(daemon.endpoint, [
        'run',
        '-d',
        '--name',
        'rt1',
        '--init',
        '--tmpfs',
        '/tmp',
        '--entrypoint',
        'sleep',
        IMAGE,
        'infinity',
      ]);
      expect(made.code, made.stderr).toBe(0);
      box = new DockerRuntime(daemon.endpoint, 'rt1');
    }, 120_000);

    afterAll(async () => {
      await daemon.close();
      registry.releaseAll();
      delete process.env.MALLORY_STATE_DIR;
      rmSync(root, { recursive: true, force: true });
    }, 60_000);

    it('starts a command in its own process group in the container, signals the group and sees it end', async () => {
      await mkdirOn(box, '/tmp/run/n1');
      const proc = await box.start(
        {
          argv: ['sh', '-c', 'echo "$MALLORY_NODE out"; echo err >&2; sleep 1000 & sleep 1000'],
          env: { MALLORY_NODE: 'n1' },
          cwd: '/tmp/run/n1',
          stdout: '/tmp/run/n1/stdout.log',
          stderr: '/tmp/run/n1/stderr.log',
          label: 'n1: sh',
        },
        registry,
      );
      expect(proc.pgid).toBe(proc.pid);
      // Four in the group: the shell that leads it, the node's sh and its two sleeps.
      const stats = async (): Promise<string[]> =>
        (
          await box.exec([
            'sh',
            '-c',
            `for s in /proc/[0-9]*/stat; do set -- $(cat $s 2>/dev/null); [ "$5" = ${proc.pgid} ] && echo "$1 $3"; done; true`,
          ])
        ).stdout
          .split('\n')
          .filter((l) => l !== '');
      await waitUntil(async () => (await stats()).length >= 4, 'the group of four');
      await box.signal(proc, 'SIGSTOP');
      await waitUntil(async () => (await stats()).every((l) => l.endsWith(' T')), 'the group stopped');
      await box.signal(proc, 'SIGCONT');
      await waitUntil(async () => (await stats()).every((l) => !l.endsWith(' T')), 'the group resumed');
      expect((await readFileOn(box, '/tmp/run/n1/stdout.log')).toString()).toBe('n1 out\n');
      expect((await readFileOn(box, '/tmp/run/n1/stderr.log')).toString()).toBe('err\n');
      await box.signal(proc, 'SIGKILL');
      expect(await proc.exited).toEqual({ code: null, signal: 'SIGKILL' });
      expect(await stats()).toEqual([]);
      const exit3 = await box.start(
        {
          argv: ['sh', '-c', 'exit 3'],
          env: {},
          cwd: '/tmp/run/n1',
          stdout: '/tmp/run/n1/stdout.log',
          stderr: '/tmp/run/n1/stderr.log',
          label: 'n1: exit 3',
        },
        registry,
      );
      expect(await exit3.exited).toEqual({ code: 3, signal: null });
    });

    it('writes, reads, uploads, empties and removes files, streams what is appended up to stop, and knows what can run', async () => {
      const local = join(root, 'upload.bin');
      const bytes = Buffer.from([0, 1, 2, 255, 10, 13, 0]);
      writeFileSync(local, bytes);
      await mkdirOn(box, '/tmp/files/sub');
      await uploadTo(box, local, '/tmp/files/sub/up.bin');
      expect(await readFileOn(box, '/tmp/files/sub/up.bin')).toEqual(bytes);
      await writeFileOn(box, '/tmp/files/a.txt', 'hello\n');
      expect((await readFileOn(box, '/tmp/files/a.txt')).toString()).toBe('hello\n');
      // Small bytes go in as a command's stdin, binary-safe.
      await writeFileOn(box, '/tmp/files/b.bin', bytes);
      expect(await readFileOn(box, '/tmp/files/b.bin')).toEqual(bytes);
      expect(await box.exec(['sh', '-c', 'cat; exit 5'], { input: 'in\n' })).toMatchObject({
        code: 5,
        stdout: 'in\n',
      });
      await expect(readFileOn(box, '/tmp/files/none')).rejects.toThrow(/rt1/);

      const chunks: Buffer[] = [];
      const stream = followFile(box, '/tmp/files/grow.log', (c) => chunks.push(c));
      await box.exec(['sh', '-c', 'echo one >> /tmp/files/grow.log']);
      await waitUntil(() => Buffer.concat(chunks).toString() === 'one\n', 'the first line streamed');
      // Written just before stop: stop still delivers it.
      await box.exec(['sh', '-c', 'echo two >> /tmp/files/grow.log']);
      await stream.stop();
      expect(Buffer.concat(chunks).toString()).toBe('one\ntwo\n');
      // stop ended the tail in the container.
      const tails = await box.exec([
        'sh',
        '-c',
        'for f in /proc/[0-9]*/comm; do [ "$(cat $f 2>/dev/null)" = tail ] && echo $f; done; true',
      ]);
      expect(tails.stdout).toBe('');

      await emptyOn(box, '/tmp/files');
      expect((await box.exec(['find', '/tmp/files', '-mindepth', '1'])).stdout).toBe('');
      await removeOn(box, '/tmp/files');
      expect((await box.exec(['test', '-e', '/tmp/files'])).code).toBe(1);
      expect(await isRunnableOn(box, 'setsid')).toBe(true);
      expect(await isRunnableOn(box, 'iptables')).toBe(true);
      expect(await isRunnableOn(box, '/usr/bin/etcd-not-here')).toBe(false);
    });
  },
);
