import { afterEach, describe, expect, it } from 'vitest';

import { Harness } from './_helpers/harness.js';
import { nodeIo } from '../../../src/systems/kvraft/_internals/node-seams.js';

let harness: Harness | undefined;

afterEach(async () => {
  await harness?.cleanup();
  harness = undefined;
});

describe('kvraft basics (real processes)', () => {
  it('elects one leader, replicates writes to every node and serves read/write/cas', async () => {
    const h = (harness = await Harness.create(3));
    await h.startAll();
    const leader = await h.waitLeader();
    const follower = h.nodes.find((n) => n !== leader.id)!;

    // A client on a follower follows the leader hint once.
    const client = h.client(follower);
    expect(await client.write('x', 1)).toEqual({ type: 'ok' });
    expect(await client.read('x')).toEqual({ type: 'ok', value: 1 });
    expect(await client.read('missing')).toEqual({ type: 'ok', value: null });
    expect(await client.cas('x', 1, 2)).toEqual({ type: 'ok' });
    expect(await client.cas('x', 1, 3)).toMatchObject({ type: 'fail', error: 'cas mismatch' });
    expect(await client.cas('missing', 0, 3)).toMatchObject({ type: 'fail' });
    expect(await client.read('x')).toEqual({ type: 'ok', value: 2 });
    for (let i = 0; i < 20; i++) expect((await client.write(`k${i}`, i)).type).toBe('ok');
    await client.close();

    const leaderNow = await h.status(leader.id);
    const target = leaderNow!.commit;
    for (const node of h.nodes) {
      const s = await h.waitFor(`${node} to apply ${target}`, async () => {
        const st = await h.status(node);
        return st && st.applied >= target ? st : undefined;
      });
      expect(s.term).toBe(leader.term);
      expect(s.leader).toBe(leader.id);
    }
  });

  it('runs transactions as one entry each, and lists survive snapshots and restarts', async () => {
    const h = (harness = await Harness.create(3));
    await h.startAll({ snapshotEvery: 4 });
    const leader = await h.waitLeader();
    const follower = h.nodes.find((n) => n !== leader.id)!;
    const client = h.client(follower);
    expect(
      await client.txn([
        ['r', 'l', null],
        ['append', 'l', 1],
        ['append', 'l', 2],
        ['r', 'l', null],
        ['w', 'r', 7],
        ['r', 'r', null],
      ]),
    ).toEqual({
      type: 'ok',
      value: [
        ['r', 'l', null],
        ['append', 'l', 1],
        ['append', 'l', 2],
        ['r', 'l', [1, 2]],
        ['w', 'r', 7],
        ['r', 'r', 7],
      ],
    });
    for (let i = 3; i <= 12; i++) expect((await client.txn([['append', 'l', i]])).type).toBe('ok');
    // All or nothing: the register makes the append fail, and the first append is not applied.
    expect(
      await client.txn([
        ['append', 'l', 99],
        ['append', 'r', 1],
      ]),
    ).toMatchObject({ type: 'fail' });
    expect(await client.read('l')).toMatchObject({ type: 'fail' });
    await client.close();
    for (const node of h.nodes) await h.kill(node);
    await h.startAll({ snapshotEvery: 4 });
    const next = await h.waitLeader();
    const again = h.client(next.id);
    const expected = Array.from({ length: 12 }, (_, i) => i + 1);
    expect(await again.txn([['r', 'l', null]])).toEqual({ type: 'ok', value: [['r', 'l', expected]] });
    expect(await again.read('r')).toEqual({ type: 'ok', value: 7 });
    await again.close();
  });

  it('refuses on a follower with a leader hint, and reports unreachable nodes as fail', async () => {
    const h = (harness = await Harness.create(3));
    await h.startAll();
    const leader = await h.waitLeader();
    const follower = h.nodes.find((n) => n !== leader.id)!;
    const { requestOnce } = await import('../../../src/systems/kvraft/_internals/connection.js');
    const response = await requestOnce(
      h.view.clientAddress(follower, 'client'),
      { op: 'write', key: 'a', value: 1 },
      1000,
      nodeIo,
    );
    expect(response).toMatchObject({ ok: false, definite: true, error: 'not leader', leader: leader.id });
    await h.kill(follower);
    const client = h.client(follower, 500);
    expect((await client.read('a')).type).toBe('fail');
    await client.close();
  });

  it('emits probe events with matching send/recv message ids', async () => {
    const h = (harness = await Harness.create(3));
    await h.startAll();
    const leader = await h.waitLeader();
    const client = h.client(leader.id);
    expect((await client.write('x', 1)).type).toBe('ok');
    await client.close();
    await new Promise((r) => setTimeout(r, 200));
    const events = h.allEvents();
    const types = new Set(events.map((e) => e.type));
    for (const t of [
      'node-start',
      'become-candidate',
      'become-leader',
      'vote-granted',
      'commit-advance',
      'append-accepted',
      'send',
      'recv',
    ]) {
      expect(types).toContain(t);
    }
    const leaderEvent = events.find((e) => e.type === 'become-leader')!;
    expect(leaderEvent.node).toBe(leader.id);
    expect(leaderEvent.attrs?.term).toBe(leader.term);
    const sends = new Map(events.filter((e) => e.type === 'send').map((e) => [e.attrs!.msg, e]));
    const recvs = events.filter((e) => e.type === 'recv');
    expect(recvs.length).toBeGreaterThan(10);
    let matched = 0;
    for (const r of recvs) {
      const s = sends.get(r.attrs!.msg);
      if (!s) continue;
      matched++;
      expect(s.attrs!.peer).toBe(r.node);
      expect(r.attrs!.peer).toBe(s.node);
      expect(s.attrs!.kind).toBe(r.attrs!.kind);
      expect(s.ts).toBeLessThanOrEqual(r.ts);
    }
    expect(matched).toBeGreaterThan(recvs.length * 0.9);
  });
});
