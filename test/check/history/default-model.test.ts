import { describe, expect, it } from 'vitest';

import { defaultModel } from '../../../src/check/history/default-model.js';
import type { ParsedHistory } from '../../../src/check/history/parsed-history.js';
import type { Op } from '../../../src/core/op.js';

function parsed(format: ParsedHistory['format'], ...ops: [Op['type'], string, unknown][]): ParsedHistory {
  return {
    format,
    ops: ops.map(([type, f, value], index) => ({ index, time: index, type, process: 0, f, value })),
    lines: ops.map((_, i) => i + 1),
  };
}

describe('defaultModel', () => {
  it('picks cas-register for Jepsen logs of one register and kv for [key, v] values', () => {
    expect(defaultModel(parsed('jepsen-log', ['invoke', 'read', null]))).toBe('cas-register');
    expect(defaultModel(parsed('jepsen-log', ['invoke', 'cas', [3, 0]], ['ok', 'cas', [3, 0]]))).toBe(
      'cas-register',
    );
    expect(
      defaultModel(parsed('jepsen-log', ['invoke', 'read', [0, null]], ['invoke', 'cas', [0, [4, 0]]])),
    ).toBe('kv');
    expect(
      defaultModel(parsed('jsonl', ['invoke', 'write', ['k', 1]], ['invoke', 'read', ['k', null]])),
    ).toBe('kv');
    expect(defaultModel(parsed('edn', ['invoke', 'write', 1], ['invoke', 'cas', [1, 2]]))).toBe(
      'cas-register',
    );
  });

  it('picks set or counter for add ops by what reads return', () => {
    expect(defaultModel(parsed('jsonl', ['invoke', 'add', 1], ['ok', 'read', [1]]))).toBe('set');
    expect(defaultModel(parsed('jsonl', ['invoke', 'add', 1], ['ok', 'read', 1]))).toBe('counter');
  });
});
