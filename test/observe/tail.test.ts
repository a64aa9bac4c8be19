import { appendFileSync, mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { FileTail } from '../../src/observe/tail.js';

async function until(cond: () => boolean, timeoutMs = 2000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 5));
  }
}

describe('FileTail', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'mallory-tail-'));
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('yields complete lines as the file grows, from an offset, and the rest on stop', async () => {
    const path = join(dir, 'log');
    writeFileSync(path, 'skipped\n');
    const lines: string[] = [];
    const tail = new FileTail(path, (l) => lines.push(l), { offset: 8 });
    tail.start();
    appendFileSync(path, 'one\ntw');
    await until(() => lines.length === 1);
    appendFileSync(path, 'o\r\nthree\n');
    await until(() => lines.length === 3);
    expect(tail.offset).toBe(8 + 'one\ntwo\r\nthree\n'.length);
    appendFileSync(path, 'tail-without-newline');
    await tail.stop();
    expect(lines).toEqual(['one', 'two', 'three', 'tail-without-newline']);
  });

  it('waits for a file that does not exist yet, and restarts after truncation', async () => {
    const path = join(dir, 'later');
    const lines: string[] = [];
    const tail = new FileTail(path, (l) => lines.push(l), { pollMs: 10 });
    tail.start();
    await new Promise((r) => setTimeout(r, 30));
    writeFileSync(path, 'a\nb\n');
    await until(() => lines.length === 2);
    truncateSync(path, 0);
    await new Promise((r) => setTimeout(r, 30));
    appendFileSync(path, 'c\n');
    await until(() => lines.length === 3);
    await tail.stop();
    expect(lines).toEqual(['a', 'b', 'c']);
  });

  it('delivers lines with low latency and a host timestamp', async () => {
    const path = join(dir, 'fast');
    writeFileSync(path, '');
    const seen: { line: string; ts: number }[] = [];
    const tail = new FileTail(path, (line, ts) => seen.push({ line, ts }));
    tail.start();
    await new Promise((r) => setTimeout(r, 20));
    const t0 = Number(process.hrtime.bigint());
    appendFileSync(path, 'x\n');
    await until(() => seen.length === 1);
    const latencyMs = (Number(process.hrtime.bigint()) - t0) / 1e6;
    expect(latencyMs).toBeLessThan(200);
    expect(seen[0].ts).toBeGreaterThanOrEqual(t0);
    await tail.stop();
  });

  it('releases its watcher, timer and file handle on stop', async () => {
    const path = join(dir, 'leak');
    writeFileSync(path, 'a\n');
    const before = process.getActiveResourcesInfo().length;
    const tails = Array.from({ length: 5 }, () => new FileTail(path, () => undefined, { pollMs: 10 }));
    for (const t of tails) t.start();
    await new Promise((r) => setTimeout(r, 40));
    expect(process.getActiveResourcesInfo().length).toBeGreaterThan(before);
    await Promise.all(tails.map((t) => t.stop()));
    await new Promise((r) => setTimeout(r, 20));
    expect(process.getActiveResourcesInfo().length).toBeLessThanOrEqual(before);
  });
});
