import path from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import type { Readiness } from '../../../src/index.js';
import type { NodeStatus } from '../../../src/systems/kvraft/_internals/messages.js';
import { kvraft } from '../../../src/systems/kvraft/index.js';
import { requestOnce } from '../../../src/systems/kvraft/_internals/connection.js';
import { Harness } from './_helpers/harness.js';
import { nodeIo } from '../../../src/systems/kvraft/_internals/node-seams.js';

let harness: Harness | undefined;

afterEach(async () => {
  await harness?.cleanup();
  harness = undefined;
});

/**
 * The leader once a write has committed through it: one just elected can still be deposed by a
 * candidate of the same start (a CI run asked a node that no longer led).
 */
function settledLeader(h: Harness): Promise<NodeStatus> {
  return h.waitFor(
    'a leader a write commits through',
    async () => {
      const leader = await h.waitLeader();
      const client = h.client(leader.id);
      try {
        return (await client.write('settled', 1)).type === 'ok' ? leader : undefined;
      } finally {
        await client.close();
      }
    },
    10_000,
  );
}

describe('kvraft adapter', () => {
  it('builds the node command line from the cluster view', async () => {
    const h = (harness = await Harness.create(3));
    const adapter = kvraft.create({ bugs: ['stale-read', 'lazy-vote'] });
    const spec = adapter.launch('n2', h.view, { join: true });
    expect(spec.command).toBe(process.execPath);
    expect(spec.args[0]).toMatch(/dist\/systems\/kvraft\/node\.js$/);
    const arg = (flag: string) => spec.args[spec.args.indexOf(flag) + 1];
    expect(arg('--id')).toBe('n2');
    expect(arg('--data')).toBe(h.view.dataDir('n2'));
    const peers = new Map(
      arg('--peers')
        .split(',')
        .map((p) => p.split('=') as [string, string]),
    );
    const hp = (a: { host: string; port: number }) => `${a.host}:${a.port}`;
    expect(peers.get('n1')).toBe(hp(h.view.dial('n2', 'n1', 'peer')));
    expect(peers.get('n3')).toBe(hp(h.view.dial('n2', 'n3', 'peer')));
    expect(peers.get('n2')).toBe(hp(h.view.listen('n2', 'peer')));
    expect(arg('--client')).toBe(hp(h.view.listen('n2', 'client')));
    expect(arg('--members')).toBe('n1,n2,n3');
    expect(spec.args).toContain('--join');
    expect(spec.args.filter((a) => a === '--bug')).toHaveLength(2);
    expect(spec.env?.MALLORY_PROBE_FILE).toBe(path.join(h.view.runDir, 'nodes', 'n2', 'probe.jsonl'));
    expect(() => kvraft.create({ bugs: ['no-such-bug'] })).toThrow(/choose from ack-before-commit/);
    expect(kvraft.bugs).toHaveLength(15);
    expect(adapter.crashPatterns.some((p) => p.test('ASSERTION FAILED: x'))).toBe(true);
  });

  it('reports readiness and the leader, and a hung node as info', async () => {
    const h = (harness = await Harness.create(3));
    const adapter = kvraft.create({ bugs: [] });
    await h.startAll();
    const answer = (await adapter.ready(h.view, AbortSignal.timeout(10_000))) as Readiness;
    expect(answer.ready).toBe(true);
    const leader = await adapter.leadership!.leader(h.view);
    // What it checked: a leader (the one it names), and a read through it.
    expect(answer.checks).toEqual([
      { check: 'a leader', ok: true, detail: expect.any(String) as string },
      { node: answer.checks[0].detail, check: 'read', ok: true, detail: 'served' },
    ]);
    expect(leader).toBe((await h.waitLeader()).id);
    const follower = h.nodes.find((n) => n !== leader)!;
    await h.pause(follower);
    const client = adapter.client(follower, h.view, 300);
    expect((await client.read('x')).type).toBe('info');
    await client.close();
    await h.resume(follower);
  });

  it('is not ready while no node runs', async () => {
    const h = (harness = await Harness.create(3));
    const adapter = kvraft.create({ bugs: [] });
    expect(await adapter.ready(h.view, AbortSignal.timeout(500))).toEqual({
      ready: false,
      checks: [{ check: 'a leader', ok: false, detail: 'no node says it leads' }],
    });
  });

  it('reports the configuration only once it is committed', async () => {
    const h = (harness = await Harness.create(3));
    await h.startAll();
    const leader = await settledLeader(h);
    const adapter = kvraft.create({ bugs: [] });
    expect([...((await adapter.membership!.configuration!(h.view)) ?? [])].sort()).toEqual([
      'n1',
      'n2',
      'n3',
    ]);
    const followers = h.nodes.filter((n) => n !== leader.id);
    for (const f of followers) await h.pause(f);
    // Appended on the leader, never committed: the nemesis must not take it as done.
    await requestOnce(
      h.view.clientAddress(leader.id, 'client'),
      { op: 'remove-member', node: followers[0] },
      500,
      nodeIo,
    );
    await h.waitFor('the removal to be appended', async () =>
      (await h.status(leader.id))?.members.includes(followers[0]) === false ? true : undefined,
    );
    expect(await adapter.membership!.configuration!(h.view)).toBeUndefined();
    for (const f of followers) await h.resume(f);
    // Then a leader commits either the removal or, if a follower wins the election first, the old
    // configuration again (the change is overwritten): either way there is an answer once more.
    const settled = await h.waitFor('a committed configuration', () =>
      adapter.membership!.configuration!(h.view),
    );
    expect([2, 3]).toContain(settled.length);
  });

  it('does not answer ok to a change that is only appended (a retry of a removal that never committed)', async () => {
    // Found by a campaign: an isolated leader was asked to remove itself; the first request timed
    // out, the retry was answered ok because the appended configuration already lacked the node,
    // and the nemesis wiped a node the rest of the cluster still counted as a voter.
    const h = (harness = await Harness.create(3));
    await h.startAll();
    const leader = await settledLeader(h);
    await h.isolate(leader.id);
    expect((await h.status(leader.id))?.role).toBe('leader');
    const ask = (): Promise<unknown> =>
      requestOnce(
        h.view.clientAddress(leader.id, 'client'),
        { op: 'remove-member', node: leader.id },
        500,
        nodeIo,
      );
    await ask();
    // Appended (not committed: the leader is cut off), once the leader has got to the request.
    await h.waitFor('the removal to be appended', async () =>
      (await h.status(leader.id))?.members.includes(leader.id) === false ? true : undefined,
    );
    expect(await ask()).toMatchObject({ ok: false });
  });
});
