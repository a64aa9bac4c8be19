import { describe, expect, it } from 'vitest';

import type { Event } from '../../src/core/event.js';
import { EventTypes } from '../../src/observe/event-types.js';

const at = (type: string, source: Event['source'] = 'probe'): Event => ({ ts: 1, node: 'n1', source, type });

describe('EventTypes', () => {
  it('counts the types the system shows, the least recently seen first; client and nemesis ops are not its', () => {
    const types = new EventTypes();
    for (const e of [
      at('a'),
      at('b', 'log'),
      at('send', 'net'),
      at('a'),
      at('write', 'client'),
      at('kill', 'nemesis'),
    ]) {
      types.observe(e);
    }
    expect(types.byRecency()).toEqual(['b', 'send', 'a']);
    expect(types.count('a')).toBe(2);
    expect(types.count('write')).toBe(0);
    expect(types.size).toBe(3);
  });
});
