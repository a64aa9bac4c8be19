import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { LEADER_ANSWER, RoleRecorder, roleOfEvent } from '../../src/campaign/_internals/record-roles.js';
import { monoNs } from '../../src/core/clock.js';
import { readRunData } from '../../src/report/run-data.js';
import { readStoredRun } from '../../src/store/run-reader.js';
import { readRoles } from '../../src/store/role-file.js';
import { matchLogRules } from '../../src/systems/log-rules.js';
import { fakeRun } from '../report/_helpers/fake-run.js';

describe("roles from the adapter's events, before any guess from log text", () => {
  const run = fakeRun();
  afterAll(() => {
    rmSync(join(run.store, '..'), { recursive: true, force: true });
  });

  it('takes a role attribute (probe or log rule) and a probe type that names one; not network events', () => {
    expect(roleOfEvent({ ts: 0, node: 'n1', source: 'probe', type: 'become-leader' })).toBe('leader');
    expect(
      roleOfEvent({ ts: 0, node: 'n1', source: 'probe', type: 'x', attrs: { role: 'StateFollower' } }),
    ).toBe('follower');
    const leading = matchLogRules(
      [{ re: /Peer state changed: leading/, type: 'leading', attrs: { role: 'leader' } }],
      'Peer state changed: leading',
    );
    expect(leading).toEqual({ type: 'leading', attrs: { role: 'leader' } });
    expect(roleOfEvent({ ts: 0, node: 'n1', source: 'log', ...leading! })).toBe('leader');
    // A log event's type is not read as text: only what the log reader or a rule put in `role`.
    expect(roleOfEvent({ ts: 0, node: 'n1', source: 'log', type: 'become-leader' })).toBeUndefined();
    expect(
      roleOfEvent({ ts: 0, node: 'n1', source: 'net', type: 'send', attrs: { role: 'leader' } }),
    ).toBeUndefined();
  });

  it("records them on the run's time axis, and the report draws those instead of the log's", async () => {
    const dir = join(run.store, '..', 'roles-run');
    mkdirSync(join(dir, 'nodes', 'n1'), { recursive: true });
    const startMs = Date.now() - 5000;
    const hear = new RoleRecorder(dir, startMs).hear;
    hear({ ts: monoNs(), node: 'n1', source: 'probe', type: 'become-candidate' });
    hear({ ts: monoNs(), node: 'n1', source: 'log', type: 'leading', attrs: { role: 'leader' } });
    hear({ ts: monoNs(), node: 'n1', source: 'net', type: 'recv' });
    const lines = readRoles(dir, 'n1')!;
    expect(lines.map((l) => [l.role, l.event])).toEqual([
      ['candidate', 'become-candidate'],
      ['leader', 'leading'],
    ]);
    for (const l of lines) expect(Math.abs(l.atMs - 5000)).toBeLessThan(1000);
    expect(readRoles(dir, 'n2')).toBeUndefined();

    // In the fake run, n2's log says follower at 210 ms; its recorded events say leader at 2000 ms.
    const startedAt = Date.parse(readStoredRun(run.dir).run.startedAt);
    expect(Number.isFinite(startedAt)).toBe(true);
    writeFileSync(
      join(run.dir, 'nodes', 'n2', 'roles.jsonl'),
      JSON.stringify({ atMs: 2000, role: 'leader', event: 'leading' }) + '\n',
    );
    const data = await readRunData(run.dir);
    expect(data.roleChanges.filter((c) => c.node === 'n2')).toEqual([
      { node: 'n2', atMs: 2000, role: 'leader' },
    ]);
    // n1 has no roles.jsonl: its log's become-leader line still gives its role.
    expect(data.roleChanges.filter((c) => c.node === 'n1')).toEqual([
      { node: 'n1', atMs: 200, role: 'leader' },
    ]);
  });

  it("takes the adapter's leader answers too, never overruling a node's own events with another's answer", () => {
    const dir = join(run.store, '..', 'answers-run');
    for (const n of ['n1', 'n2', 'n3']) mkdirSync(join(dir, 'nodes', n), { recursive: true });
    const roles = new RoleRecorder(dir, Date.now());
    roles.leaderAnswered('n1');
    roles.leaderAnswered('n1'); // the same answer again: no new line
    roles.hear({ ts: monoNs(), node: 'n3', source: 'probe', type: 'become-leader' });
    roles.leaderAnswered('n2');
    const said = (n: string): [string, string][] => (readRoles(dir, n) ?? []).map((l) => [l.role, l.event]);
    expect(said('n1')).toEqual([
      ['leader', LEADER_ANSWER],
      ['follower', LEADER_ANSWER],
    ]);
    expect(said('n2')).toEqual([['leader', LEADER_ANSWER]]);
    // n3 said by its own event that it leads (a stale leader, say): an answer naming n2 keeps that.
    expect(said('n3')).toEqual([['leader', 'become-leader']]);
  });
});
