/**
 * What checkpoints cost when the nodes run on SSH hosts: three hosts made on this machine (network
 * namespaces, each running Debian's sshd with its own /tmp, so a data dir reaches the fuzzer only
 * over SSH), one campaign per system on them (random policy, the hosts' default faults), and from
 * its summary the pause of the nodes per checkpoint and the bytes per schedule (holes not
 * counted); then the same campaign on this machine (`--network netns`) for comparison. Needs
 * root and `openssh-server`, and `npm run build`.
 *
 * `npx tsx bench/checkpoints-hosts.ts [time=60s] [systems=kvraft,etcd] [seed=1]`
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

import { ResourceRegistry } from '../src/cluster/resources.js';
import { makeSshHosts, sshHostsUnavailable } from '../test/_helpers/ssh-hosts.js';

const REPO = resolve(import.meta.dirname, '..');
const BIN = join(REPO, 'bin', 'mallory.js');
const TIME = process.argv[2] ?? '60s';
const SYSTEMS = (process.argv[3] ?? 'kvraft,etcd').split(',');
const SEED = process.argv[4] ?? '1';
/** The faults a run on hosts takes by default, for both runs of a system. */
const FAULTS = 'partition,kill,pause,member';

interface Summary {
  readonly status: string;
  readonly elapsedMs: number;
  readonly schedules: number;
  readonly checkpoints?: {
    readonly taken: number;
    readonly bytes: number;
    readonly pauseMsMedian: number | null;
    readonly pauseMsMax: number | null;
    readonly bytesPerSchedule: number | null;
  };
}

const mib = (bytes: number | null | undefined): string =>
  bytes === null || bytes === undefined ? '-' : (bytes / 1024 ** 2).toFixed(2);

function campaign(args: readonly string[], store: string): string {
  const r = spawnSync(process.execPath, [BIN, ...args, '--store', store, '--json'], {
    cwd: REPO,
    encoding: 'utf8',
    timeout: 30 * 60_000,
    maxBuffer: 256 * 1024 * 1024,
    env: { ...process.env, MALLORY_STATE_DIR: join(store, 'state') },
  });
  let s: Summary;
  try {
    s = JSON.parse(r.stdout) as Summary;
  } catch {
    return `gave no summary: ${r.stderr.trim().split('\n').at(-1) ?? ''}`;
  }
  const c = s.checkpoints;
  return (
    `${String(s.schedules).padStart(9)}  ${String(c?.taken ?? 0).padStart(5)}  ` +
    `${`${c?.pauseMsMedian ?? '-'} / ${c?.pauseMsMax ?? '-'}`.padStart(23)}  ` +
    `${mib(c?.bytesPerSchedule).padStart(16)}  ${mib(c?.bytes).padStart(8)}  ${s.status}`
  );
}

const unavailable = sshHostsUnavailable();
if (unavailable !== undefined) {
  process.stdout.write(`bench/checkpoints-hosts.ts: cannot run here: ${unavailable}\n`);
  process.exit(2);
}
// Outside /tmp: each host has its own /tmp, and sshd reads its keys from here.
const root = mkdtempSync('/var/tmp/mallory-checkpoints-hosts-bench-');
process.env.MALLORY_STATE_DIR = join(root, 'state');
const registry = new ResourceRegistry(`ckpthostsbench${process.pid}`, root);
const hosts = await makeSshHosts(3, join(root, 'keys'), registry, `ckpthostsbench${process.pid}`, {
  ownTmp: true,
});
const onSignal = (): void => {
  void hosts.close().finally(() => {
    registry.releaseAll();
    rmSync(root, { recursive: true, force: true });
    process.exit(130);
  });
};
process.once('SIGINT', onSignal).once('SIGTERM', onSignal);
try {
  const ssh = [
    '--hosts',
    hosts.addresses.join(','),
    '--ssh-private-key',
    hosts.privateKey,
    '--known-hosts',
    hosts.knownHosts,
  ];
  console.log(
    `checkpoint cost per schedule, one ${TIME} campaign per system and place (--policy random --seed ${SEED} --faults ${FAULTS})`,
  );
  console.log(
    'system  where      schedules  taken  pause ms (median / max)  MiB per schedule  MiB kept  status',
  );
  for (const system of SYSTEMS) {
    const common = ['run', '--system', system, '--time', TIME, '--policy', 'random', '--seed', SEED];
    common.push('--faults', FAULTS);
    for (const [where, extra] of [
      ['ssh hosts', ssh],
      ['netns', ['--network', 'netns']],
    ] as const) {
      const store = mkdtempSync(join(tmpdir(), 'mallory-checkpoints-hosts-bench-'));
      try {
        console.log(`${system.padEnd(7)} ${where.padEnd(9)}  ${campaign([...common, ...extra], store)}`);
      } finally {
        rmSync(store, { recursive: true, force: true });
      }
    }
  }
} finally {
  await hosts.close();
  registry.releaseAll();
  rmSync(root, { recursive: true, force: true });
}
