import { describe, expect, it } from 'vitest';

import { renameTemplateIds, templateText } from '../../src/observe/template-ids.js';

describe('templateText', () => {
  it('names a template by its tokens as the log line reads', () => {
    expect(templateText(['became', 'leader', 'at', 'term', '<*>'])).toBe('log[became leader at term <*>]');
    expect(templateText([])).toBe('log[]');
  });
});

describe('renameTemplateIds', () => {
  const textOf = new Map([
    ['L3', 'log[applied <*>]'],
    ['L7', 'log[became leader]'],
    ['L12', 'log[vote granted]'],
  ]);

  it('replaces every known template id of a pair by its text', () => {
    expect(renameTemplateIds('p:L7 > L12', textOf)).toBe('p:log[became leader] > log[vote granted]');
    expect(renameTemplateIds('x:L3 >append> L7', textOf)).toBe(
      'x:log[applied <*>] >append> log[became leader]',
    );
    expect(renameTemplateIds('p:leader:L7 > follower:L12', textOf)).toBe(
      'p:leader:log[became leader] > follower:log[vote granted]',
    );
  });

  it('replaces an id after a prefix, or before a qualifier', () => {
    expect(renameTemplateIds('n:L3', textOf)).toBe('n:log[applied <*>]');
    expect(renameTemplateIds('L7', textOf)).toBe('log[became leader]');
    expect(renameTemplateIds('L7/leader > L7', textOf)).toBe(
      'log[became leader]/leader > log[became leader]',
    );
  });

  it('replaces both ids of a pair written without spaces', () => {
    expect(renameTemplateIds('L7>L12', textOf)).toBe('log[became leader]>log[vote granted]');
  });

  it('leaves an unknown id alone', () => {
    expect(renameTemplateIds('p:L7 > L99', textOf)).toBe('p:log[became leader] > L99');
    expect(renameTemplateIds('n:L99', new Map())).toBe('n:L99');
  });

  it('leaves an id inside a longer word alone', () => {
    const unchanged = ['CALL7', 'p:XL7 > L12x', 'L70 > L3a', 's:leaders=2', 'p:^ > $'];

    expect(unchanged.map((f) => renameTemplateIds(f, textOf))).toEqual(unchanged);
  });
});
