import { appendFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { ResourceRegistry } from '../../../src/cluster/resources.js';
import { followFile } from '../../../src/cluster/runtime/follow.js';
import { LocalRuntime } from '../../../src/cluster/runtime/local.js';
import { waitUntil } from './_helpers/wait-until.js';
import {
  emptyOn,
  isRunnableOn,
  mkdirOn,
  readFileOn,
  removeOn,
  writeFileOn,
} from '../../../src/cluster/runtime/files.js';

function processState(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0];
  } catch {
    return undefined;
  }
}

describe('LocalRuntime', () => {
  let root: string;
  let registry: ResourceRegistry;
  const runtime = new LocalRuntime();

  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'mallory-local-runtime-'));
    process.env.MALLORY_STATE_DIR = join(root, 'state');
    registry = new ResourceRegistry(`localruntime${process.pid}`);
  });

  afterEach(() => {
    registry.releaseAll();
    delete process.env.MALLORY_STATE_DIR;
    rmSync(root, { recursive: true, force: true });
  });

  it('starts a command as the leader of its own group, stops and continues the group, and hears its end', async () => {
    const proc = await runtime.start(
      {
        argv: ['sh', '-c', 'echo "$GREETING"; sleep 30 & wait'],
        env: { GREETING: 'hello' },
        cwd: root,
        stdout: join(root, 'out.log'),
        stderr: join(root, 'err.log'),
        label: 'test: sh',
      },
      registry,
    );
    expect(proc.pgid).toBe(proc.pid);
    await waitUntil(() => readFileSync(join(root, 'out.log'), 'utf8') === 'hello\n', 'the greeting');

    await runtime.signal(proc, 'SIGSTOP');
    await waitUntil(() => processState(proc.pid) === 'T', 'the group stopped');
    await runtime.signal(proc, 'SIGCONT');
    await waitUntil(() => processState(proc.pid) !== 'T', 'the group continued');
    await runtime.signal(proc, 'SIGKILL');

    expect(await proc.exited).toEqual({ code: null, signal: 'SIGKILL' });
  });

  it('streams a file from its start as it grows, one that does not exist yet included', async () => {
    const file = join(root, 'grows.log');
    const chunks: Buffer[] = [];
    const stream = followFile(runtime, file, (chunk) => chunks.push(chunk));
    appendFileSync(file, 'one\n');
    await waitUntil(() => Buffer.concat(chunks).toString() === 'one\n', 'the first line');
    appendFileSync(file, 'two\n');
    await stream.stop();

    expect(Buffer.concat(chunks).toString()).toBe('one\ntwo\n');
  });

  it('writes, reads, empties and removes files and dirs, and runs commands', async () => {
    const dir = join(root, 'a', 'b');
    await mkdirOn(runtime, dir);
    await writeFileOn(runtime, join(dir, 'f'), 'x');
    expect((await readFileOn(runtime, join(dir, 'f'))).toString()).toBe('x');
    await emptyOn(runtime, dir);
    expect((await runtime.exec(['ls', '-A', dir])).stdout).toBe('');
    await removeOn(runtime, join(root, 'a'));
    expect((await runtime.exec(['test', '-e', join(root, 'a')])).code).toBe(1);
    expect(await isRunnableOn(runtime, 'sh')).toBe(true);
    expect(await isRunnableOn(runtime, '/nonexistent/mallory-no-such-binary')).toBe(false);
  });

  it('gives a command its stdin', async () => {
    const bytes = Buffer.from([0, 1, 255, 10]);
    expect((await runtime.exec(['od', '-An', '-tx1'], { input: bytes })).stdout.trim()).toBe('00 01 ff 0a');
    expect(await runtime.exec(['sh', '-c', 'cat; exit 5'], { input: 'in\n' })).toMatchObject({
      code: 5,
      stdout: 'in\n',
    });
    // A command that ends without reading its stdin: its exit, not a broken pipe here.
    const big = Buffer.alloc(4 * 1024 * 1024, 1);
    expect((await runtime.exec(['sh', '-c', 'exit 7'], { input: big })).code).toBe(7);
  });
});
