import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import { skipReason } from '../systems/_helpers/cluster.js';
import { disposeSandbox, jsonOf, mallory, type Sandbox, sandbox } from './helpers.js';

interface RunJson {
  readonly runDir: string;
  readonly ops: { readonly ok: number };
  readonly bugs: readonly unknown[];
}

/** One kill, two steps in: enough to see the cluster serve and recover from the checkpoint. */
function killSchedule(box: Sandbox): string {
  const file = join(box.store, '..', 'kill.jsonl');
  writeFileSync(file, '{"atMs": 2500, "f": "kill", "value": "one"}\n');
  return file;
}

/** The checkpoint of the run's first schedule. */
function firstCheckpoint(runDir: string): string {
  const dir = join(runDir, 'checkpoints');
  const schedules = readdirSync(dir).filter((d) => /^\d+$/.test(d));
  expect(schedules.length, `no checkpoint in ${dir}`).toBeGreaterThan(0);
  return join(dir, schedules.sort((a, b) => Number(a) - Number(b))[0] ?? '0');
}

const ETCD_SKIP = skipReason(['etcd']);

describe('a run started from a checkpoint finds the addresses and clocks its data dirs expect', () => {
  const boxes: Sandbox[] = [];
  afterEach(() => {
    for (const b of boxes.splice(0)) disposeSandbox(b);
  });

  it.skipIf(ETCD_SKIP !== undefined)(
    `etcd on the proxy network restarts on a checkpoint's stored peer addresses and serves${ETCD_SKIP ? ` (skipped: ${ETCD_SKIP})` : ''}`,
    async () => {
      const box = sandbox();
      boxes.push(box);
      const common = ['--system', 'etcd', '--network', 'proxy', '--store', box.store, '--json'];
      const first = await mallory(['run', ...common, '--time', '15s', '--seed', '2'], box);
      expect(first.code, first.stderr).toBe(0);
      const checkpoint = firstCheckpoint((jsonOf(first) as RunJson).runDir);
      const manifest = JSON.parse(readFileSync(join(checkpoint, 'checkpoint.json'), 'utf8')) as {
        network: { kind: string; ports?: Record<string, number> };
      };
      expect(manifest.network.kind).toBe('proxy');
      expect(Object.keys(manifest.network.ports ?? {})).toContain('n1>n2/peer');

      // etcd keeps its members' peer URLs in its data dir: on other ports it never forms a quorum.
      const again = await mallory(
        [
          'run',
          ...common,
          '--from-checkpoint',
          checkpoint,
          '--schedule',
          killSchedule(box),
          '--steps',
          '3',
          '--startup-timeout',
          '30s',
        ],
        box,
      );
      expect(again.code, again.stderr).toBe(0);
      expect(again.stderr).toContain('starting from the checkpoint of schedule 1');
      expect(again.stderr).not.toContain('ports are taken');
      expect((jsonOf(again) as RunJson).ops.ok).toBeGreaterThan(0);
    },
  );

  it('a clock offset the checkpoint recorded is set again before the nodes start, or said not to be', async () => {
    const box = sandbox();
    boxes.push(box);
    const common = ['--store', box.store, '--json', '--seed', '3'];
    const first = await mallory(['run', ...common, '--time', '8s', '--steps', '2'], box);
    expect(first.code, first.stderr).toBe(0);
    const checkpoint = firstCheckpoint((jsonOf(first) as RunJson).runDir);
    // A heal resets every clock, so a campaign's checkpoints hold 0: write an offset in.
    const file = join(checkpoint, 'checkpoint.json');
    const manifest = JSON.parse(readFileSync(file, 'utf8')) as {
      nodes: { node: string; clockOffsetMs: number }[];
    };
    for (const n of manifest.nodes) if (n.node === 'n2') n.clockOffsetMs = -5_000;
    writeFileSync(file, JSON.stringify(manifest, null, 2));

    const from = [
      'run',
      ...common,
      '--from-checkpoint',
      checkpoint,
      '--schedule',
      killSchedule(box),
      '--steps',
      '2',
    ];
    const withClocks = await mallory([...from, '--faults', 'clock,kill'], box);
    expect(withClocks.code, withClocks.stderr).toBe(0);
    expect(withClocks.stderr).toContain('clocks as at the checkpoint: n2 -5000 ms');
    const clockFile = readdirSync(join((jsonOf(withClocks) as RunJson).runDir), { recursive: true })
      .map(String)
      .filter((p) => p.includes('n2') && p.includes('clock'));
    expect(clockFile.length, 'the run has no clock control file for n2').toBeGreaterThan(0);

    const without = await mallory(from, box);
    expect(without.code, without.stderr).toBe(0);
    expect(without.stderr).toContain(
      "the checkpoint's clock offsets (n2 -5000 ms) are not applied: this run has no clock faults",
    );
  });
});
