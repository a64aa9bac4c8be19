import { describe, expect, it } from 'vitest';

import {
  ClientScope,
  ClientThrewError,
  containClientError,
  inAdapterScope,
} from '../../src/core/client-scope.js';

/** What the process's uncaught-exception handler sees: it runs in the context of the callback that threw. */
function thrownLater(schedule: (fn: () => void) => void): Promise<ReturnType<typeof containClientError>> {
  return new Promise((resolve) => {
    schedule(() => {
      resolve(containClientError(new Error('Unknown code: 7')));
    });
  });
}

describe('ClientScope', () => {
  it('an error from a timer a call set is that client failure: the call in flight ends with it', async () => {
    const scope = inAdapterScope('my-db', () => new ClientScope('n2'));
    let contained: ReturnType<typeof containClientError>;
    const call = scope.call(() => {
      void thrownLater((fn) => setTimeout(fn, 5)).then((c) => (contained = c));
      return new Promise<never>(() => undefined);
    });
    await expect(call).rejects.toBeInstanceOf(ClientThrewError);
    await expect(call).rejects.toThrow(
      'the client threw outside any call (a socket handler or a timer): Unknown code: 7',
    );
    expect(contained?.say).toMatch(
      /^my-db: the client of n2 threw outside any call Mallory made .*: Unknown code: 7; its op in flight is recorded as info/,
    );
    expect(scope.failed).toBeInstanceOf(ClientThrewError);
    await expect(scope.call(() => 'no')).rejects.toBeInstanceOf(ClientThrewError);
  });

  it('a throw from what the client set up at its creation, with no call in flight, retires the client', async () => {
    const scope = new ClientScope('n1');
    const contained = await scope.run(() => thrownLater((fn) => setImmediate(fn)));
    expect(contained?.say).toMatch(
      /^the system adapter: the client of n1 .*; it is replaced before its next op/,
    );
    expect(scope.failed).toBeInstanceOf(ClientThrewError);
  });

  it('the same throw from the same node is said once', async () => {
    const say = async (): Promise<string | undefined> =>
      (await new ClientScope('n3').run(() => thrownLater((fn) => setTimeout(fn, 1))))?.say;
    expect(await say()).toBeDefined();
    expect(await say()).toBeUndefined();
  });

  it('an error thrown in no client scope is not contained (it stays an internal error)', async () => {
    expect(await thrownLater((fn) => setTimeout(fn, 1))).toBeUndefined();
  });

  it('a call that answers resolves with its answer, synchronous or not', async () => {
    const scope = new ClientScope('n1');
    expect(await scope.call(() => 1)).toBe(1);
    expect(await scope.call(() => Promise.resolve(2))).toBe(2);
    await expect(scope.call(() => Promise.reject(new Error('refused')))).rejects.toThrow('refused');
    expect(scope.failed).toBeUndefined();
  });
});
