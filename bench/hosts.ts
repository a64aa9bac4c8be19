/**
 * kvraft on SSH hosts against the same system in local network namespaces, side by side: three
 * hosts made on this machine (network namespaces, each running Debian's sshd; the fuzzer reaches
 * them only over SSH), the same seed, faults and time on both. Prints per run the client ops per
 * second, the probe events and the captured messages (pcap) per second that reached the fuzzer,
 * the faults enacted and the states seen; then a kvraft bug switch found by a policy campaign on the hosts and its schedule replayed
 * `repeat` times there. Needs root and `openssh-server`, and `npm run build`. Event-to-fault
 * latency over SSH: `npx tsx bench/trigger-latency.ts 30 netns,hosts`.
 *
 * `npx tsx bench/hosts.ts [time=60s] [seed=7] [bug=ack-before-commit|none] [repeat=10] [bug-time=10m] [system=kvraft] [faults=partition,kill,pause]`
 * (a bug switch is kvraft's; with another system give `none`).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

import { ResourceRegistry } from '../src/cluster/resources.js';
import { type KvraftBug, kvraftBugArgs } from '../src/systems/kvraft/bugs.js';
import { makeSshHosts, sshHostsUnavailable } from '../test/_helpers/ssh-hosts.js';

const REPO = resolve(import.meta.dirname, '..');
const BIN = join(REPO, 'bin', 'mallory.js');
const TIME = process.argv[2] ?? '60s';
const SEED = process.argv[3] ?? '7';
const BUG = process.argv[4] ?? 'ack-before-commit';
const REPEAT = process.argv[5] ?? '10';
const BUG_TIME = process.argv[6] ?? '10m';
const SYSTEM = process.argv[7] ?? 'kvraft';
const FAULTS = process.argv[8] ?? 'partition,kill,pause';

interface Summary {
  readonly runDir: string;
  readonly status: string;
  readonly elapsedMs: number;
  readonly ops: {
    readonly ok: number;
    readonly fail: number;
    readonly info: number;
    readonly refused?: number;
  };
  readonly faults: number;
  readonly bugs: readonly { readonly dir: string; readonly kind: string; readonly name: string }[];
  readonly verdict: { readonly valid: boolean | 'unknown' };
  readonly metrics: Readonly<Record<string, number>>;
}

function mallory(args: readonly string[], env: NodeJS.ProcessEnv): unknown {
  const r = spawnSync(process.execPath, [BIN, ...args, '--json'], {
    encoding: 'utf8',
    env,
    maxBuffer: 256 * 1024 * 1024,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  try {
    return JSON.parse(r.stdout) as unknown;
  } catch {
    throw new Error(`mallory ${args.join(' ')}: exit ${r.status}, no JSON on stdout`);
  }
}

/** The probe events the run's nodes wrote that reached the fuzzer's run dir. */
function probeEvents(runDir: string): number {
  const nodes = join(runDir, 'nodes');
  let n = 0;
  for (const node of readdirSync(nodes)) {
    const file = join(nodes, node, 'probe.jsonl');
    if (existsSync(file))
      n += readFileSync(file, 'utf8')
        .split('\n')
        .filter((l) => l !== '').length;
  }
  return n;
}

function row(name: string, s: Summary): string {
  const seconds = s.elapsedMs / 1000;
  const ops = s.ops.ok + s.ops.fail + s.ops.info + (s.ops.refused ?? 0);
  const states = Object.entries(s.metrics).find(([k]) => k.startsWith('states_'))?.[1] ?? 0;
  return (
    `  ${name.padEnd(22)} ${seconds.toFixed(1).padStart(6)} s  ${(ops / seconds).toFixed(0).padStart(6)} ops/s` +
    `  ${(s.ops.ok / seconds).toFixed(0).padStart(6)} ok/s  ${(probeEvents(s.runDir) / seconds).toFixed(0).padStart(6)} probe events/s` +
    `  ${((s.metrics.net_events ?? 0) / seconds).toFixed(0).padStart(6)} captured/s` +
    `  ${String(s.faults).padStart(4)} faults  ${String(states).padStart(4)} states  valid ${String(s.verdict.valid)}`
  );
}

const unavailable = sshHostsUnavailable();
if (unavailable !== undefined) {
  process.stdout.write(`bench/hosts.ts: cannot run here: ${unavailable}\n`);
  process.exit(2);
}
const root = mkdtempSync(join(tmpdir(), 'mallory-hosts-bench-'));
const env = { ...process.env, MALLORY_STATE_DIR: join(root, 'state') };
process.env.MALLORY_STATE_DIR = env.MALLORY_STATE_DIR;
const registry = new ResourceRegistry(`hostsbench${process.pid}`, root);
const hosts = await makeSshHosts(3, join(root, 'keys'), registry, `hostsbench${process.pid}`);
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
  const common = ['run', '--system', SYSTEM, '--faults', FAULTS, '--seed', SEED, '--time', TIME];
  const store = join(root, 'store');
  const local = mallory(
    [...common, '--network', 'netns', '--checkpoints', '0', '--store', store],
    env,
  ) as Summary;
  const remote = mallory([...common, ...ssh, '--store', store], env) as Summary;
  process.stdout.write(`\n${SYSTEM}, 3 nodes, --faults ${FAULTS}, seed ${SEED}, --time ${TIME}\n`);
  process.stdout.write(`${row('local (namespaces)', local)}\n${row('SSH hosts', remote)}\n`);

  if (BUG !== 'none') {
    const found = mallory(
      [
        'run',
        ...kvraftBugArgs(BUG as KvraftBug),
        ...ssh,
        '--stop-on-bug',
        '--time',
        BUG_TIME,
        '--seed',
        SEED,
        '--store',
        store,
      ],
      env,
    ) as Summary;
    const bug = found.bugs[0];
    if (bug === undefined) {
      process.stdout.write(`\n${BUG} on SSH hosts: not found by a ${BUG_TIME} campaign (seed ${SEED})\n`);
    } else {
      const replay = mallory(['replay', bug.dir, '--repeat', REPEAT, '--store', store], env) as {
        reproduced: number;
        tries: readonly unknown[];
      };
      process.stdout.write(
        `\n${BUG} on SSH hosts: found ${bug.kind}/${bug.name} in ${(found.elapsedMs / 1000).toFixed(0)} s (seed ${SEED}); ` +
          `replayed on the hosts ${replay.reproduced}/${replay.tries.length}\n`,
      );
    }
  }
} finally {
  process.off('SIGINT', onSignal).off('SIGTERM', onSignal);
  await hosts.close();
  registry.releaseAll();
  rmSync(root, { recursive: true, force: true });
}
