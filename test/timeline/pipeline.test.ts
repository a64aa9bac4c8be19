import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import { Coverage } from '../../src/abstraction/coverage.js';
import { monoNs } from '../../src/core/clock.js';
import { LogEvents } from '../../src/observe/log-events.js';
import { parseProbeLine } from '../../src/observe/probe-events.js';
import { FileTail } from '../../src/observe/tail.js';
import { Timeline } from '../../src/timeline/timeline.js';

// The wiring a campaign does: tails → events → timeline → window → abstractions → coverage.
describe('observe → timeline → abstraction', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('turns appended log and probe lines into a window with edges and states', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mallory-pipe-'));
    dirs.push(dir);
    const timeline = new Timeline({ graceMs: 100 });
    const logs = new LogEvents();
    const tails: FileTail[] = [];
    let ingested = 0;
    for (const node of ['n1', 'n2']) {
      writeFileSync(join(dir, `${node}.log`), '');
      writeFileSync(join(dir, `${node}.probe`), '');
      tails.push(
        new FileTail(join(dir, `${node}.log`), (line, ts) => {
          const e = logs.toEvent(node, line, ts);
          if (e) timeline.ingest(e);
          ingested++;
        }),
        new FileTail(join(dir, `${node}.probe`), (line) => {
          const e = parseProbeLine(node, line);
          if (e) timeline.ingest(e);
          ingested++;
        }),
      );
    }
    for (const t of tails) t.start();
    const start = monoNs();
    appendFileSync(join(dir, 'n1.log'), '2026-11-29T08:00:00Z INFO raft: n1 became leader at term 2\n');
    const probe = (node: string, type: string, attrs: Record<string, string | number>): void => {
      appendFileSync(join(dir, `${node}.probe`), JSON.stringify({ ts: monoNs(), type, attrs }) + '\n');
    };
    probe('n1', 'tick', { term: 2 });
    probe('n1', 'append', { term: 2 });
    probe('n1', 'send', { msg: 'm1', peer: 'n2' });
    probe('n2', 'recv', { msg: 'm1', peer: 'n1' });
    probe('n2', 'ack', { term: 2 });
    appendFileSync(join(dir, 'n2.log'), '2026-11-29T08:00:01Z INFO raft: n2 became follower at term 2\n');
    // Log lines are stamped when read (within a poll period): end the window once all 7 were read.
    const deadline = Date.now() + 10_000;
    while (ingested < 7 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
    const end = monoNs();
    const window = await timeline.close(0, start, end);
    await Promise.all(tails.map((t) => t.stop()));
    expect(window.events).toHaveLength(7);
    expect(window.edges).toHaveLength(1);
    const { states, seenBefore } = new Coverage().observe(window, null);
    expect(window.events.map((e) => e.type.replace(/^L\d+/, 'L')).sort()).toEqual([
      'L/follower',
      'L/leader',
      'ack',
      'append',
      'recv',
      'send',
      'tick',
    ]);
    // Log lines are stamped when read, so across sources on one node the order is only as fine as
    // the tail's latency: here all lines are written within microseconds, so roles may lag.
    expect(states.causal.features.filter((f) => /^x:.:append > /.test(f))).toHaveLength(1);
    expect(states.causal.features).toContain('s:leaders=1');
    expect(states.artifact.features).toEqual(['tick > append']);
    expect(seenBefore).toEqual({ artifact: 0, causal: 0 });
  });
});
