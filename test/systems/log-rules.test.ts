import { describe, expect, it } from 'vitest';

import { type LogRule, matchLogRules } from '../../src/systems/log-rules.js';

const RULES: readonly LogRule[] = [
  { re: /became leader at term (\d+)/, type: 'became-leader', groups: ['term'] },
  { re: /peer (\w+) lost after (\d+\.\d+) s/, type: 'peer-lost', groups: ['peer', 'seconds'] },
  { re: /leader/, type: 'leader-mentioned' },
];

describe('matchLogRules', () => {
  it('gives the first matching rule, numeric groups as numbers and others as text', () => {
    expect(matchLogRules(RULES, 'INFO n1 became leader at term 7')).toEqual({
      type: 'became-leader',
      attrs: { term: 7 },
    });
    expect(matchLogRules(RULES, 'peer n2 lost after 1.5 s')).toEqual({
      type: 'peer-lost',
      attrs: { peer: 'n2', seconds: 1.5 },
    });
  });

  it('gives no attrs for a rule without groups, and undefined when nothing matches', () => {
    expect(matchLogRules(RULES, 'asked the leader')).toEqual({ type: 'leader-mentioned' });
    expect(matchLogRules(RULES, 'compaction done')).toBeUndefined();
  });
});
