import { describe, expect, it } from 'vitest';

import { replayCommand, replayTries } from '../../src/core/replay-command.js';

describe('replayCommand', () => {
  it('asks a real bug for a rate over ten tries, a simulated one for one exact try', () => {
    expect(replayCommand('mallory', 'store/kvraft/r/bugs/1', false)).toBe(
      'mallory replay store/kvraft/r/bugs/1 --repeat 10',
    );
    expect(replayCommand('./bin/mallory.js', 'store/kvraft/r/bugs/1', true)).toBe(
      './bin/mallory.js replay store/kvraft/r/bugs/1',
    );
    expect([replayTries(false), replayTries(true)]).toEqual([10, 1]);
  });
});
