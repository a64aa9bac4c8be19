import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterEach, expect, it } from 'vitest';

import { mallory, type Sandbox, sandbox, disposeSandbox, jsonOf } from '../../e2e/helpers.js';
import { skipReason } from '../_helpers/cluster.js';

// A campaign in network namespaces observes the messages between nodes by packet capture: a
// schedule line triggered on a captured `recv` fires on etcd, which reports no message itself.

const reason = skipReason(['etcd', 'tcpdump']);
const SCHEDULE = join(import.meta.dirname, 'schedules', 'on-captured-message.jsonl');

interface HistoryLine {
  readonly process: string;
  readonly type: string;
  readonly f: string;
  readonly value: unknown;
  readonly error?: string;
}

const boxes: Sandbox[] = [];
afterEach(() => {
  for (const b of boxes.splice(0)) disposeSandbox(b);
});

it.skipIf(reason !== undefined)(
  `etcd in namespaces: a fault triggered on a captured message fires on its receiver${reason ? ` (skipped: ${reason})` : ''}`,
  async () => {
    const box = sandbox();
    boxes.push(box);
    const args = ['run', '--system', 'etcd', '--network', 'netns', '--schedule', SCHEDULE, '--steps', '4'];
    const r = await mallory([...args, '--seed', '1', '--store', box.store, '--json'], box, 180_000);
    expect(r.code, r.stderr).toBe(0);
    const summary = jsonOf(r) as { runDir: string };
    const nemesis = readFileSync(join(summary.runDir, 'history.jsonl'), 'utf8')
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as HistoryLine)
      .filter((op) => op.process === 'nemesis' && op.f === 'kill');
    // The kill's completion names the node the captured message went to (its invocation has none).
    const done = nemesis.filter((op) => Array.isArray(op.value));
    expect(nemesis.map((op) => op.error)).toEqual([undefined, undefined]);
    expect(done).toEqual([expect.objectContaining({ value: [expect.stringMatching(/^n[123]$/) as string] })]);
  },
);
