import { readFileSync, realpathSync } from 'node:fs';
import { join } from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import { THROWING_NODE, THROWN } from '../fixtures/systems/kvraft-async-throw.js';
import { disposeSandbox, mallory, REPO, registryFiles, runStatus, sandbox, type Sandbox } from './helpers.js';

/**
 * A user's client library that throws from a timer it set inside a call, outside any call Mallory
 * made: the exception is that client's failure (its op in flight ends as `info` with the error),
 * said once in one line naming the adapter and the node, and the campaign runs on to its end.
 */

const SYSTEM = join(REPO, 'test', 'fixtures', 'systems', 'kvraft-async-throw.ts');
const STACK_LINE = /^\s+at /m;

interface HistoryOp {
  readonly type: string;
  readonly process: number;
  readonly node?: string;
  readonly error?: string;
}

describe("an exception thrown asynchronously in a user's client", () => {
  const boxes: Sandbox[] = [];
  afterEach(() => {
    for (const b of boxes.splice(0)) disposeSandbox(b);
  });

  it('is that client failure: an info op naming the error, one line naming the node, the run completes', async () => {
    const box = sandbox();
    boxes.push(box);
    const args = ['run', '--system', SYSTEM, '--time', '8s', '--faults', 'partition', '--seed', '1'];
    const result = await mallory([...args, '--store', box.store], box);
    expect(result.stderr).not.toMatch(STACK_LINE);
    expect(result.stderr).not.toMatch(/internal error/);
    expect([0, 1], result.stderr).toContain(result.code);

    const lines = result.stderr.split('\n').filter((l) => l.includes(THROWN));
    expect(lines).toEqual([
      `mallory: kvraft-async-throw: the client of ${THROWING_NODE} threw outside any call Mallory made (from a socket handler or a timer): ${THROWN}; its op in flight is recorded as info with that error and the run goes on (said once per node and message): make the client catch it and answer through its call`,
    ]);

    const runDir = realpathSync(join(box.store, 'latest'));
    expect(runStatus(runDir).status).toBe('complete');
    const ops = readFileSync(join(runDir, 'history.jsonl'), 'utf8')
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as HistoryOp);
    const thrown = ops.filter((op) => op.error?.includes(THROWN) === true);
    expect(thrown.length).toBeGreaterThan(0);
    for (const op of thrown) {
      expect(op.type).toBe('info');
      expect(op.node).toBe(THROWING_NODE);
      expect(op.error).toBe(`the client threw outside any call (a socket handler or a timer): ${THROWN}`);
    }
    // The run went on after the throw: later ops on that node were answered.
    const lastThrown = ops.lastIndexOf(thrown[thrown.length - 1]);
    expect(ops.slice(lastThrown).some((op) => op.type === 'ok' && op.node === THROWING_NODE)).toBe(true);
    expect(registryFiles(box)).toEqual([]);
  });
});
