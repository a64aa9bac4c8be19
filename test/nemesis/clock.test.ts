import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import { clockControlFile, faketimeSpec, writeControlFile } from '../../src/cluster/clock-preload.js';
import { CoalescedClockWriter, NodeClocks } from '../../src/nemesis/clock.js';
import { ClockFamily } from '../../src/nemesis/families/clock.js';
import type { FamilyContext } from '../../src/nemesis/families/family.js';

const dirs: string[] = [];
function runDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'mallory-clock-'));
  dirs.push(dir);
  return dir;
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const read = (dir: string, node: string): string => readFileSync(clockControlFile(dir, node), 'utf8');

describe('faketimeSpec', () => {
  it.each([
    [0, '+0.000\n'],
    [-60_000, '-60.000\n'],
    [1_500, '+1.500\n'],
    [-0.4, '+0.000\n'],
    [2.6, '+0.003\n'],
    [-86_400_123, '-86400.123\n'],
  ])('%d ms is %j', (ms, text) => {
    expect(faketimeSpec(ms)).toBe(text);
  });
});

describe('writeControlFile', () => {
  it('replaces the file whole and leaves no temp file', () => {
    const dir = runDir();
    const file = clockControlFile(dir, 'n1');
    writeControlFile(file, 5_000);
    writeControlFile(file, -250);
    expect(readFileSync(file, 'utf8')).toBe('-0.250\n');
    expect(readdirSync(join(dir, 'nodes', 'n1'))).toEqual(['clock.faketime']);
  });
});

describe('NodeClocks', () => {
  it('bumps add up, drift grows with time, strobe flips each period, reset puts them back', () => {
    const dir = runDir();
    let now = 1_000_000;
    const clocks = new NodeClocks(dir, () => now);
    clocks.bump(['n1'], -60_000);
    clocks.bump(['n1'], 10_000);
    expect(read(dir, 'n1')).toBe('-50.000\n');
    expect(existsSync(clockControlFile(dir, 'n2'))).toBe(false);

    clocks.drift(['n2'], 1.5);
    now += 2_000;
    expect(clocks.offsetMs('n2')).toBe(1_000);
    clocks.bump(['n2'], 500);
    now += 2_000;
    expect(clocks.offsetMs('n2')).toBe(2_500);

    clocks.strobe(['n3'], 3_000, 200);
    expect(clocks.offsetMs('n3')).toBe(3_000);
    now += 200;
    expect(clocks.offsetMs('n3')).toBe(0);
    now += 200;
    expect(clocks.offsetMs('n3')).toBe(3_000);

    expect(clocks.faulted).toEqual(['n1', 'n2', 'n3']);
    clocks.reset(['n1']);
    expect(read(dir, 'n1')).toBe('+0.000\n');
    expect(clocks.faulted).toEqual(['n2', 'n3']);
    clocks.close();
    expect(clocks.faulted).toEqual([]);
    expect(read(dir, 'n2')).toBe('+0.000\n');
    expect(read(dir, 'n3')).toBe('+0.000\n');
  });
});

describe('NodeClocks.set', () => {
  it('puts a node at a fixed offset (a checkpoint restore), and 0 puts it back on real time', () => {
    const dir = runDir();
    const clocks = new NodeClocks(dir, () => 1_000);
    clocks.set('n2', -7_500);
    expect(read(dir, 'n2')).toBe('-7.500\n');
    expect(clocks.offsetMs('n2')).toBe(-7_500);
    expect(clocks.faulted).toEqual(['n2']);
    clocks.set('n2', 0);
    expect(read(dir, 'n2')).toBe('+0.000\n');
    expect(clocks.faulted).toEqual([]);
    clocks.close();
  });
});

describe('NodeClocks on a slow writer (control files on other hosts)', () => {
  it('a strobe ticking faster than writes land keeps one write in flight per node, then writes the newest offset', async () => {
    const puts: { node: string; offsetMs: number; end: () => void }[] = [];
    const writer = new CoalescedClockWriter(
      (node, offsetMs) => new Promise<void>((resolve) => puts.push({ node, offsetMs, end: resolve })),
    );
    let now = 0;
    const clocks = new NodeClocks(writer, () => now);
    clocks.strobe(['n1'], 10_000, 100);
    expect(puts).toEqual([expect.objectContaining({ node: 'n1', offsetMs: 10_000 })]);
    // The ticker asks again every tick while the first write is still in flight.
    const deadline = Date.now() + 5_000;
    while (writer.counts.asked < 6 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(writer.counts.asked).toBeGreaterThanOrEqual(6);
    expect(puts).toHaveLength(1);

    now = 150; // the strobe's second half period: no offset, asked by the next tick
    const asked = writer.counts.asked;
    while (writer.counts.asked === asked && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
    puts[0].end();
    while (puts.length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
    expect(puts).toHaveLength(2);
    expect(puts[1].offsetMs).toBe(0);

    clocks.close();
    const settled = clocks.settled();
    puts[1].end();
    while (puts.length < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
    puts[2]?.end();
    await settled;
    expect(puts.at(-1)?.offsetMs).toBe(0);
    expect(writer.counts.written).toBe(puts.length);
  });
});

describe('ClockFamily.heal on a writer that fails (a host lost)', () => {
  it("puts the clocks back and says the failed write among the heal's errors, without throwing", async () => {
    const writer = new CoalescedClockWriter(() => Promise.reject(new Error('host h1: connection lost')));
    const clocks = new NodeClocks(writer);
    clocks.bump(['n1'], 5_000);
    await expect(clocks.settled()).rejects.toThrow('connection lost');
    const errors: string[] = [];
    // The heal reads only the clocks of its context.
    await new ClockFamily().heal({ clocks } as unknown as FamilyContext, errors);
    expect(errors).toEqual(['reset-clock: host h1: connection lost']);
    expect(clocks.faulted).toEqual([]);
  });
});
