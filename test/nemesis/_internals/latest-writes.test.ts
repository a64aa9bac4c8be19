import { describe, expect, it } from 'vitest';

import { LatestWrites } from '../../../src/nemesis/_internals/latest-writes.js';

/** A `put` whose writes end when the test says: each call is kept with its key, value and ending. */
function controlledPut(): {
  put: (key: string, value: number) => Promise<void>;
  calls: { key: string; value: number; end: () => void; fail: (e: Error) => void }[];
  inFlight: () => number;
} {
  const calls: { key: string; value: number; end: () => void; fail: (e: Error) => void }[] = [];
  let open = 0;
  return {
    calls,
    inFlight: () => open,
    put: (key, value) =>
      new Promise<void>((resolve, reject) => {
        open++;
        calls.push({
          key,
          value,
          end: () => {
            open--;
            resolve();
          },
          fail: (e) => {
            open--;
            reject(e);
          },
        });
      }),
  };
}

/** Lets the promise callbacks queued so far run. */
const flush = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('LatestWrites', () => {
  it('writes a key one at a time, the values asked meanwhile folded into the newest', async () => {
    const p = controlledPut();
    const writes = new LatestWrites(p.put);
    const first = writes.write('n1', 1);
    const second = writes.write('n1', 2);
    const third = writes.write('n1', 3);
    expect(p.calls.map((c) => c.value)).toEqual([1]);
    expect(p.inFlight()).toBe(1);

    p.calls[0].end();
    await first;
    await flush();
    expect(p.calls.map((c) => c.value)).toEqual([1, 3]);
    expect(p.inFlight()).toBe(1);

    p.calls[1].end();
    await Promise.all([second, third]);
    expect(writes.counts).toEqual({ asked: 3, written: 2 });
  });

  it('writes different keys side by side', () => {
    const p = controlledPut();
    const writes = new LatestWrites(p.put);
    void writes.write('n1', 1);
    void writes.write('n2', 5);
    void writes.write('n1', 2);
    expect(p.calls.map((c) => `${c.key}=${c.value}`)).toEqual(['n1=1', 'n2=5']);
    expect(p.inFlight()).toBe(2);
  });

  it('a failed write rejects its callers and the next settled, once', async () => {
    const p = controlledPut();
    const writes = new LatestWrites(p.put);
    const first = writes.write('n1', 1);
    const waiting = writes.write('n1', 2);
    p.calls[0].fail(new Error('host h1: connection lost'));
    await expect(first).rejects.toThrow('connection lost');
    await flush();
    p.calls[1].fail(new Error('host h1: still lost'));
    await expect(waiting).rejects.toThrow('still lost');
    await expect(writes.settled()).rejects.toThrow('connection lost');
    await expect(writes.settled()).resolves.toBeUndefined();
  });

  it('settled waits for the writes asked before it, not for those a ticker asks after', async () => {
    const p = controlledPut();
    const writes = new LatestWrites(p.put);
    void writes.write('n1', 1);
    void writes.write('n1', 2);
    let settled = false;
    const done = writes.settled().then(() => (settled = true));
    p.calls[0].end();
    await flush();
    expect(settled).toBe(false);
    void writes.write('n1', 3);
    p.calls[1].end();
    await done;
    expect(settled).toBe(true);
    // n1=3 is still waiting its turn: it was asked after settled was.
    expect(p.calls.map((c) => c.value)).toEqual([1, 2, 3]);
    expect(p.inFlight()).toBe(1);
  });
});
