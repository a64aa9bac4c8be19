import { describe, expect, it } from 'vitest';

import { featureByText, templateText } from '../../src/fleet/states.js';

describe('templateText', () => {
  it('names a template by its tokens as the log line reads', () => {
    expect(templateText(['became', 'leader', 'at', 'term', '<*>'])).toBe('log[became leader at term <*>]');
    expect(templateText([])).toBe('log[]');
  });
});

describe('featureByText', () => {
  const textOf = new Map([
    ['L3', 'log[applied <*>]'],
    ['L7', 'log[became leader]'],
    ['L12', 'log[vote granted]'],
  ]);

  it('replaces every known template id of a pair by its text', () => {
    expect(featureByText('p:L7 > L12', textOf)).toBe('p:log[became leader] > log[vote granted]');
    expect(featureByText('x:L3 >append> L7', textOf)).toBe('x:log[applied <*>] >append> log[became leader]');
    expect(featureByText('p:leader:L7 > follower:L12', textOf)).toBe(
      'p:leader:log[became leader] > follower:log[vote granted]',
    );
  });

  it('replaces an id after a prefix, or before a qualifier', () => {
    expect(featureByText('n:L3', textOf)).toBe('n:log[applied <*>]');
    expect(featureByText('L7', textOf)).toBe('log[became leader]');
    expect(featureByText('L7/leader > L7', textOf)).toBe('log[became leader]/leader > log[became leader]');
  });

  it('replaces both ids of a pair written without spaces', () => {
    expect(featureByText('L7>L12', textOf)).toBe('log[became leader]>log[vote granted]');
  });

  it('leaves an unknown id alone', () => {
    expect(featureByText('p:L7 > L99', textOf)).toBe('p:log[became leader] > L99');
    expect(featureByText('n:L99', new Map())).toBe('n:L99');
  });

  it('leaves an id inside a longer word alone', () => {
    const unchanged = ['CALL7', 'p:XL7 > L12x', 'L70 > L3a', 's:leaders=2', 'p:^ > $'];

    expect(unchanged.map((f) => featureByText(f, textOf))).toEqual(unchanged);
  });
});
