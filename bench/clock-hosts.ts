/**
 * What a clock fault costs on an SSH host against this one: the time from a `bump-clock`'s offset
 * set to its control file written (what a clock fault waits for before it counts as enacted), here
 * and on a host made on this machine (a network namespace running Debian's sshd, reached only over
 * SSH); then a 50 ms strobe on the host for a few seconds: how many offsets the ticker asked for
 * and how many were written (the rest overtaken while a write was in flight). Needs root and
 * `openssh-server`.
 *
 * `npx tsx bench/clock-hosts.ts [bumps=200] [strobe-s=5]`
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { clockControlFile, writeControlFile } from '../src/cluster/clock-preload.js';
import { ControlFiles } from '../src/cluster/clock-control-files.js';
import { HostsBackend } from '../src/cluster/net/hosts.js';
import { ResourceRegistry } from '../src/cluster/resources.js';
import { CoalescedClockWriter, NodeClocks } from '../src/nemesis/clock.js';
import { makeSshHosts, sshHostsUnavailable } from '../test/_helpers/ssh-hosts.js';

const BUMPS = Number(process.argv[2] ?? '200');
const STROBE_S = Number(process.argv[3] ?? '5');
const STROBE_PERIOD_MS = 50;
const MS_PER_S = 1000;
const P95 = 0.95;

function quantile(sorted: readonly number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
}

function describe(label: string, ms: readonly number[]): string {
  const sorted = [...ms].sort((a, b) => a - b);
  return `${label}: median ${quantile(sorted, 0.5).toFixed(3)} ms, p95 ${quantile(sorted, P95).toFixed(3)} ms, max ${(sorted.at(-1) ?? 0).toFixed(3)} ms (${ms.length} bumps)`;
}

/** Each bump's time from the offset set to its write landed. */
async function timeBumps(clocks: NodeClocks): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < BUMPS; i++) {
    const begun = performance.now();
    clocks.bump(['n1'], i % 2 === 0 ? 1_000 : -1_000);
    await clocks.settled();
    times.push(performance.now() - begun);
  }
  return times;
}

const unavailable = sshHostsUnavailable();
if (unavailable !== undefined) {
  process.stderr.write(`bench/clock-hosts: ${unavailable}\n`);
  process.exit(2);
}
const root = mkdtempSync(join(tmpdir(), 'mallory-clock-hosts-bench-'));
process.env.MALLORY_STATE_DIR = join(root, 'state');
const registry = new ResourceRegistry(`clockbench${process.pid}`, root);
try {
  // Here: the control file in a run dir, as a local run writes it (and as it did before the writer).
  const local = new NodeClocks(root);
  console.log(describe('here, NodeClocks.bump', await timeBumps(local)));
  local.close();
  const direct: number[] = [];
  for (let i = 0; i < BUMPS; i++) {
    const begun = performance.now();
    writeControlFile(clockControlFile(root, 'n1'), i % 2 === 0 ? 1_000 : -1_000);
    direct.push(performance.now() - begun);
  }
  console.log(describe('here, writeControlFile alone', direct));

  const hosts = await makeSshHosts(1, join(root, 'keys'), registry, `clockbench${process.pid}`);
  const backend = await HostsBackend.connect({
    runId: `clockbench${process.pid}`,
    nodes: ['n1'],
    targets: [
      {
        host: hosts.addresses[0],
        port: 22,
        username: 'root',
        privateKey: hosts.privateKey,
        knownHosts: hosts.knownHosts,
        strictHostKeyChecking: 'yes',
      },
    ],
    services: {},
    registry,
  });
  try {
    const layout = backend.layout();
    await layout.prepareHost('n1');
    const files = new ControlFiles(layout.root, (node) => backend.runtime(node));
    await files.write('n1', 0, true);
    const writer = new CoalescedClockWriter((node, offsetMs) => files.write(node, offsetMs));
    const remote = new NodeClocks(writer);
    console.log(describe('SSH host, NodeClocks.bump + settled', await timeBumps(remote)));
    remote.reset();
    await remote.settled();

    const before = writer.counts;
    remote.strobe(['n1'], 10_000, STROBE_PERIOD_MS);
    await new Promise((resolve) => setTimeout(resolve, STROBE_S * MS_PER_S));
    remote.close();
    await remote.settled();
    const asked = writer.counts.asked - before.asked;
    const written = writer.counts.written - before.written;
    console.log(
      `SSH host, ${STROBE_PERIOD_MS} ms strobe for ${STROBE_S} s: ${asked} offsets asked, ${written} written (${(written / STROBE_S).toFixed(1)}/s), ${asked - written} overtaken`,
    );
  } finally {
    await backend.close();
    await hosts.close();
  }
} finally {
  registry.releaseAll();
  rmSync(root, { recursive: true, force: true });
}
