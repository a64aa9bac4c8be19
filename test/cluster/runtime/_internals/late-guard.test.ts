import { spawnSync } from 'node:child_process';

import { describe, expect, it } from 'vitest';

import {
  ANCHOR_COMMAND,
  guardLate,
  LATE_EXIT,
  readAnchor,
} from '../../../../src/cluster/runtime/_internals/late-guard.js';

function sh(text: string): { code: number; stdout: string; stderr: string } {
  const r = spawnSync('/bin/sh', ['-c', text], { encoding: 'utf8' });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

/** This machine's boot clock against ours, read as a host's is. */
function anchorHere(): NonNullable<ReturnType<typeof readAnchor>>['anchor'] {
  const sent = performance.now();
  const read = readAnchor(sh(ANCHOR_COMMAND), sent, performance.now());
  if (read === undefined) throw new Error('no /proc/uptime here');
  return read.anchor;
}

describe('guardLate', () => {
  it('runs a command the shell starts before its deadline', () => {
    const r = sh(guardLate('echo ran', anchorHere(), performance.now(), 10_000));
    expect(r).toEqual({ code: 0, stdout: 'ran\n', stderr: '' });
  });

  it('refuses one that arrives after its timeout, saying so', () => {
    const anchor = anchorHere();
    // Asked 20 s ago with a 10 s timeout: the caller gave up on it 10 s ago.
    const r = sh(guardLate('echo ran', anchor, performance.now() - 20_000, 10_000));
    expect(r.code).toBe(LATE_EXIT);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('arrived after its 10000 ms timeout: not run');
  });

  it("keeps a margin past the anchor's error before the caller's timeout", () => {
    const anchor = { hostCs: 100_000, localMs: 5_000, errorMs: 50 };
    // 10 s timeout asked 1 s after the anchor: deadline at 1 s + 10 s - 50 ms - 100 ms past it.
    expect(guardLate('true', anchor, 6_000, 10_000)).toContain('-lt 101085 ]');
  });

  it('reads no anchor where the host has no /proc/uptime', () => {
    expect(readAnchor({ code: 2, stdout: '', stderr: 'no such file' }, 0, 1)).toBeUndefined();
    expect(readAnchor({ code: 0, stdout: '12345 678\n', stderr: '' }, 10, 20)).toEqual({
      anchor: { hostCs: 12345, localMs: 15, errorMs: 5 },
      pid: 678,
    });
  });
});
