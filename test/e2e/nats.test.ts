import { afterEach, describe, expect, it } from 'vitest';

import {
  disposeSandbox,
  mallory,
  registryFiles,
  type Sandbox,
  sandbox,
  skipReason,
  jsonOf,
} from './helpers.js';

/**
 * The NATS example (examples/nats), loaded only by path, against Debian's nats-server. Its
 * linearizability findings are NATS's own (see examples/nats/README.md); what this test holds the
 * adapter to is that a campaign runs, serves, injects faults, and leaves no finding that is the
 * harness's doing: a crash, an unexpected exit or a cluster that did not recover.
 */
interface Summary {
  readonly status: string;
  readonly system: string;
  readonly ops: { readonly ok: number };
  readonly faults: number;
  readonly bugs: readonly { readonly kind: string; readonly name: string; readonly message: string }[];
}

const reason = skipReason(['nats-server']);

describe('mallory run --system examples/nats (real nats-server)', () => {
  const boxes: Sandbox[] = [];
  afterEach(() => {
    for (const b of boxes.splice(0)) disposeSandbox(b);
  });

  it.skipIf(reason !== undefined)(
    `a 60 s campaign completes, serves, injects faults and finds no crash or recovery failure${reason ? ` (skipped: ${reason})` : ''}`,
    async () => {
      const box = sandbox();
      boxes.push(box);
      const r = await mallory(
        ['run', '--system', 'examples/nats', '--time', '60s', '--seed', '3', '--store', box.store, '--json'],
        box,
      );
      expect([0, 1], r.stderr).toContain(r.code);
      const summary = jsonOf(r) as Summary;
      expect(summary.status).toBe('complete');
      expect(summary.system).toBe('nats');
      expect(summary.ops.ok).toBeGreaterThan(0);
      expect(summary.faults).toBeGreaterThan(0);
      expect(summary.bugs.filter((b) => b.kind !== 'linearizability')).toEqual([]);
      expect(registryFiles(box)).toEqual([]);
    },
  );
});
