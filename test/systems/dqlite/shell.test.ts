import { describe, expect, it } from 'vitest';

import { parseClusterJson } from '../../../src/systems/dqlite/shell.js';

describe("parseClusterJson (the dqlite shell's `.cluster --format json`)", () => {
  it("keeps each server's 64-bit raft id to its last digit, with its address and role", () => {
    const stdout =
      '[{"ID":3297041220608546238,"Address":"10.0.0.1:9001","Role":0},{"ID":2,"Address":"10.0.0.2:9001","Role":1}]\n';
    expect(parseClusterJson(stdout)).toEqual([
      { address: '10.0.0.1:9001', role: 0, id: '3297041220608546238' },
      { address: '10.0.0.2:9001', role: 1, id: '2' },
    ]);
  });

  it('is undefined for an answer that is not the listing', () => {
    expect(parseClusterJson('Error: no leader')).toBeUndefined();
  });
});
