import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import { disposeSandbox, jsonOf, mallory, REPO, registryFiles, type Sandbox, sandbox } from './helpers.js';

const SCHEDULE = join(REPO, 'test', 'systems', 'kvraft', 'schedules', 'split-txn.jsonl');

interface Summary {
  readonly bugs: readonly {
    readonly kind: string;
    readonly name: string;
    readonly message: string;
    readonly dir: string;
  }[];
}

interface Explained {
  readonly explanation?: {
    readonly anomaly: string;
    readonly parts: readonly {
      readonly part: string;
      readonly transfer: { readonly pair: { readonly invoke: { readonly f: string } } };
    }[];
  };
}

describe('the bank check on a real system that splits its transactions', () => {
  const boxes: Sandbox[] = [];
  afterEach(() => {
    for (const b of boxes.splice(0)) disposeSandbox(b);
  });

  it('names the anomaly behind a wrong total and the transfer it saw half of', async () => {
    const box = sandbox();
    boxes.push(box);
    const r = await mallory(
      ['run', '--workload', 'bank', '--bug', 'split-txn', '--steps', '6', '--schedule', SCHEDULE].concat([
        '--seed',
        '7',
        '--store',
        box.store,
        '--json',
      ]),
      box,
    );
    expect(r.code, r.stderr).toBe(1);
    const bug = (jsonOf(r) as Summary).bugs.find((b) => b.name === 'wrong-total');
    expect(bug?.message).toMatch(
      /wrong total \d+ \(expected 100\) in process \d+'s read \(op \d+, ok at op \d+ on n\d\), balances \{.*\}: (read skew|lost transfer|money created|unexplained)/,
    );
    expect(bug?.message).toMatch(
      /it saw process \d+'s transfer \d→\d of \d \(op \d+, \w+ at op \d+ on n\d\)'s (debit but not its credit|credit but not its debit)/,
    );
    const evidence = JSON.parse(readFileSync(join(bug!.dir, 'evidence.json'), 'utf8')) as {
      errors: readonly Explained[];
    };
    const explained = evidence.errors.filter((e) => e.explanation !== undefined);
    expect(explained.length).toBeGreaterThan(0);
    const halves = explained.flatMap((e) => e.explanation!.parts);
    expect(halves.length).toBeGreaterThan(0);
    expect(halves.every((p) => p.transfer.pair.invoke.f === 'transfer')).toBe(true);
    expect(registryFiles(box)).toEqual([]);
  });
});
