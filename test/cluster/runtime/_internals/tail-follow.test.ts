import { spawn } from 'node:child_process';
import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { FollowedBytes, tailFollowScript } from '../../../../src/cluster/runtime/_internals/tail-follow.js';
import { waitUntil } from '../_helpers/wait-until.js';

const MARKER = 'end-0123456789abcdef';

const dir = mkdtempSync(join(tmpdir(), 'mallory-tail-follow-'));
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('FollowedBytes', () => {
  it('delivers at once until stopped, then holds bytes until the marker, which is never delivered', async () => {
    const got: string[] = [];
    const bytes = new FollowedBytes(MARKER, (c) => got.push(c.toString()));
    bytes.push(Buffer.from('a'));
    bytes.push(Buffer.from('b'));
    expect(got).toEqual(['a', 'b']);
    bytes.stop();
    bytes.push(Buffer.from('c' + MARKER.slice(0, 5)));
    expect(got).toEqual(['a', 'b']);
    bytes.push(Buffer.from(MARKER.slice(5)));
    await bytes.finished;
    expect(got.join('')).toBe('abc');
    bytes.push(Buffer.from('late'));
    expect(got.join('')).toBe('abc');
  });

  it('ended without its marker (the channel closed) delivers what it held', async () => {
    const got: string[] = [];
    const bytes = new FollowedBytes(MARKER, (c) => got.push(c.toString()));
    bytes.stop();
    bytes.push(Buffer.from(`x${MARKER.slice(0, 3)}`));
    bytes.end();
    await bytes.finished;
    expect(got.join('')).toBe(`x${MARKER.slice(0, 3)}`);
  });
});

describe('tailFollowScript', () => {
  it('follows two files from their start, one waited for, on stdout and stderr; a line stops one; end of stdin ends all', async () => {
    const [a, b] = [join(dir, 'a.log'), join(dir, 'b.log')];
    writeFileSync(a, 'a1\n');
    const child = spawn('sh', ['-c', tailFollowScript([a, b], MARKER)], {
      stdio: ['pipe', 'pipe', 'pipe'],
      detached: true,
    });
    let ended = false;
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const exited = new Promise<number | null>((resolve) =>
      child.once('close', (code) => {
        ended = true;
        resolve(code);
      }),
    );
    try {
      await waitUntil(() => /^pid \d+ \d+\na1\n$/.test(out), 'the header and the first file');
      writeFileSync(b, 'b1\n');
      await waitUntil(() => err === 'b1\n', 'the second file, once it exists');
      appendFileSync(b, 'b2\n');
      child.stdin.write('2\n');
      await waitUntil(() => err === `b1\nb2\n${MARKER}`, 'the second file stopped with its marker');
      appendFileSync(a, 'a2\n');
      appendFileSync(b, 'b3\n');
      await waitUntil(() => out.endsWith('a1\na2\n'), 'the first file still followed');
      child.stdin.end();
      expect(await exited).toBe(0);
      expect(err).toBe(`b1\nb2\n${MARKER}`);
    } finally {
      // Its own process group: a failed test leaves no tail or sleep behind.
      if (!ended && child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
    }
  });

  it('takes one or two files', () => {
    expect(() => tailFollowScript([], MARKER)).toThrow('one or two files');
    expect(() => tailFollowScript(['a', 'b', 'c'], MARKER)).toThrow('one or two files');
  });
});
