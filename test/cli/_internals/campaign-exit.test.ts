import { describe, expect, it } from 'vitest';

import type { BugRecord } from '../../../src/campaign/bug.js';
import { campaignExitCode } from '../../../src/cli/_internals/campaign-exit.js';

const bug = { id: 1 } as unknown as BugRecord;

describe("mallory run's exit status, as README.md and docs/commands.md give it", () => {
  it('0 found nothing, 1 found a bug, 2 an error, 130 interrupted before finding one', () => {
    expect(campaignExitCode({ status: 'complete', bugs: [] })).toBe(0);
    expect(campaignExitCode({ status: 'complete', bugs: [bug] })).toBe(1);
    expect(campaignExitCode({ status: 'error', bugs: [bug] })).toBe(2);
    expect(campaignExitCode({ status: 'interrupted', bugs: [] })).toBe(130);
  });

  it('a run interrupted (SIGTERM, Ctrl-C) after it found a bug exits 1: the bug is the answer', () => {
    expect(campaignExitCode({ status: 'interrupted', bugs: [bug] })).toBe(1);
  });
});
