import { describe, expect, it } from 'vitest';

import type { Finding } from '../../src/campaign/checker.js';
import { findingSignature } from '../../src/campaign/finding-groups.js';
import { type CrashEvidence, oneFindingPerCause } from '../../src/campaign/root-cause.js';

const crashText = (node: string): Finding => ({
  kind: 'crash',
  name: 'crash-text',
  message: `${node} stderr.log: Segmentation fault`,
  evidence: { node, kind: 'crash-text', message: 'm', lines: ['Segmentation fault'] },
});
const exit = (node: string): Finding => ({
  kind: 'crash',
  name: 'unexpected-exit',
  message: `${node} exited by itself (signal SIGSEGV)`,
  evidence: { node, kind: 'unexpected-exit', message: 'm', lines: [] },
});
const noRecovery: Finding = {
  kind: 'recovery',
  name: 'no-recovery',
  message: 'the system did not serve again',
  evidence: { resetErrors: [], nodes: [] },
};
const lost: Finding = { kind: 'durability', name: 'lost-write', message: 'lost', evidence: { key: 'x' } };

describe('oneFindingPerCause', () => {
  it('makes a crash, its exit and the recovery that never came one finding with all three pieces', () => {
    const [merged, ...rest] = oneFindingPerCause([crashText('n1'), exit('n1'), noRecovery, lost]);

    expect(rest).toEqual([lost]);
    expect(merged).toMatchObject({ kind: 'crash', name: 'crash-text' });
    const evidence = merged.evidence as CrashEvidence;
    expect(evidence.pieces.map((p) => `${p.kind}/${p.name}`)).toEqual([
      'crash/crash-text',
      'crash/unexpected-exit',
      'recovery/no-recovery',
    ]);
    expect(evidence.nodes).toEqual(['n1']);
    expect(merged.message).toContain('n1 exited by itself (signal SIGSEGV)');
    expect(merged.message).toContain('the system did not serve again');
  });

  it('gives the same crash on another node, or on two, one signature', () => {
    const once = oneFindingPerCause([crashText('n1'), exit('n1'), noRecovery])[0];
    const elsewhere = oneFindingPerCause([
      crashText('n3'),
      exit('n3'),
      crashText('n2'),
      exit('n2'),
      noRecovery,
    ])[0];
    expect(findingSignature(elsewhere)).toBe(findingSignature(once));
    expect((elsewhere.evidence as CrashEvidence).nodes).toEqual(['n2', 'n3']);
  });

  it('leaves a lone finding, and findings with no crash, as they are', () => {
    expect(oneFindingPerCause([exit('n1')])).toEqual([exit('n1')]);
    expect(oneFindingPerCause([noRecovery, lost])).toEqual([noRecovery, lost]);
    const note: Finding = { ...noRecovery, severity: 'note' };
    expect(oneFindingPerCause([exit('n1'), note])).toEqual([exit('n1'), note]);
  });
});
