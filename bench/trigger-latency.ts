/**
 * Reaction latency of an armed trigger: from the event as the node stamped it to the fault in
 * effect, through the campaign's own path — the observer (probe file tail, or packet capture),
 * `Observation` (parse, timeline), the armed trigger's match (`ArmedTrigger`, a `ScheduleRunner`)
 * and the nemesis call. Prints median and p90 per (network, observer, fault), and what each part of
 * the path costs:
 *
 * - `write`: event stamped by the node → the line in its file (the probe's buffering; the moment is
 *   the file's inotify notification, seen by a watch of our own);
 * - `read`: → the event handed to `Observation` listeners (FileTail's read, the parse, the timeline);
 *   for packet capture, the packet's capture stamp → the event (tcpdump's pipe and our pcap parser);
 * - `match`: → the trigger's fault reaching the nemesis (match, the `let` binding, the queue);
 * - `enact`: → the fault in effect (`pause`: SIGSTOP sent; `kill`: the process gone; a partition:
 *   the proxy poisoned the links, or the namespaces' iptables rules are in place).
 *
 * `npx tsx bench/trigger-latency.ts [samples=30] [proxy,netns,hosts]`. Each sample arms a trigger on the
 * next `recv` (a heartbeat will do) of one observer. Proxy network: kvraft, seen by its probe and by
 * the proxies; namespaces (root): kvraft, seen by its probe and by packet capture, and etcd
 * (`apt-get install etcd-server`), seen by packet capture; SSH hosts (root, openssh-server): kvraft
 * on three namespaces running sshd, reached only over SSH, seen by its probe file streamed back.
 */
import { watch } from 'node:fs';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { ArmedTrigger } from '../src/campaign/armed-trigger.js';
import { Observation } from '../src/campaign/observation.js';
import { Cluster } from '../src/cluster/cluster.js';
import type { NetworkBackend } from '../src/cluster/net/backend.js';
import { HostsBackend } from '../src/cluster/net/hosts.js';
import { NetnsBackend } from '../src/cluster/net/netns.js';
import { ProxyBackend } from '../src/cluster/net/proxy.js';
import { ResourceRegistry } from '../src/cluster/resources.js';
import { monoNs, sleep } from '../src/core/clock.js';
import type { Event } from '../src/core/event.js';
import { Rng } from '../src/core/random.js';
import type { TriggeredAction } from '../src/core/trigger.js';
import { Nemesis } from '../src/nemesis/nemesis.js';
import { etcd } from '../src/systems/etcd/etcd.js';
import { kvraft } from '../src/systems/kvraft/index.js';
import type { SystemAdapter } from '../src/systems/system.js';
import { makeSshHosts, type SshHosts, sshHostsUnavailable } from '../test/_helpers/ssh-hosts.js';

const SAMPLES = Number(process.argv[2] ?? 30);
const NETWORKS = (process.argv[3] ?? 'proxy,netns').split(',');
const NODES = ['n1', 'n2', 'n3'];
const READY_MS = 60_000;
/** How long a sample waits for its event before it counts as missed. */
const ARM_MS = 2_000;
/** Time for the cluster to settle after a fault is undone. */
const SETTLE_MS = 300;
const ARMING_MS = 3;
const NETNS_PORT_BASE = 7000;
const MS = 1e6;

interface Setup {
  readonly name: string;
  readonly system: SystemAdapter;
  readonly network: 'proxy' | 'netns' | 'hosts';
  /** The event type triggers wait for (a frequent one, so samples come fast), and its observer. */
  readonly on: string;
  readonly source: Event['source'];
  readonly faults: readonly TriggeredAction['f'][];
}

const KVRAFT_FAULTS: Setup['faults'] = ['pause', 'start-partition', 'kill'];
const SETUPS: readonly Setup[] = [
  // A message received, as the node's probe says (heartbeats: one every few tens of ms).
  {
    name: 'kvraft, proxy, probe',
    system: kvraft.create({ bugs: [] }),
    network: 'proxy',
    on: 'recv',
    source: 'probe',
    faults: KVRAFT_FAULTS,
  },
  // The same message as the proxy saw it forwarded.
  {
    name: 'kvraft, proxy, proxy events',
    system: kvraft.create({ bugs: [] }),
    network: 'proxy',
    on: 'recv',
    source: 'net',
    faults: KVRAFT_FAULTS,
  },
  {
    name: 'kvraft, netns, probe',
    system: kvraft.create({ bugs: [] }),
    network: 'netns',
    on: 'recv',
    source: 'probe',
    faults: KVRAFT_FAULTS,
  },
  {
    name: 'kvraft, netns, packet capture',
    system: kvraft.create({ bugs: [] }),
    network: 'netns',
    on: 'recv',
    source: 'net',
    faults: KVRAFT_FAULTS,
  },
  {
    // The nodes on SSH hosts (namespaces running sshd): the probe file streamed back over SFTP.
    name: 'kvraft, SSH hosts, probe',
    system: kvraft.create({ bugs: [] }),
    network: 'hosts',
    on: 'recv',
    source: 'probe',
    faults: KVRAFT_FAULTS,
  },
  {
    name: 'etcd, netns, packet capture',
    system: etcd.create({ bugs: [] }),
    network: 'netns',
    on: 'recv',
    source: 'net',
    faults: ['pause', 'start-partition'],
  },
];

interface Sample {
  readonly write: number | undefined;
  readonly read: number;
  readonly match: number;
  readonly enact: number;
  readonly total: number;
}

function quantile(xs: readonly number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
}

function fmt(xs: readonly number[]): string {
  if (xs.length === 0) return '     —      ';
  return `${quantile(xs, 0.5).toFixed(2).padStart(6)} / ${quantile(xs, 0.9).toFixed(2).padStart(6)}`;
}

async function measure(setup: Setup): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), 'mallory-trigger-bench-'));
  process.env.MALLORY_STATE_DIR = join(root, 'state');
  const runId = `trigbench${process.pid}`;
  const registry = new ResourceRegistry(runId, root);
  const { system } = setup;
  let net: NetworkBackend | undefined;
  let sshHosts: SshHosts | undefined;
  let cluster: Cluster | undefined;
  let observation: Observation | undefined;
  const watchers: ReturnType<typeof watch>[] = [];
  const stop = (): void => {
    void (async () => {
      await cluster?.close().catch(() => undefined);
      await net?.close().catch(() => undefined);
      registry.releaseAll();
      process.exit(130);
    })();
  };
  process.once('SIGINT', stop).once('SIGTERM', stop);
  try {
    if (setup.network === 'hosts') {
      sshHosts = await makeSshHosts(NODES.length, join(root, 'keys'), registry, `${runId}h`);
      const h = sshHosts;
      net = await HostsBackend.connect({
        runId,
        nodes: NODES,
        targets: h.addresses.map((host) => ({
          host,
          port: 22,
          username: 'root',
          privateKey: h.privateKey,
          knownHosts: h.knownHosts,
          strictHostKeyChecking: 'yes' as const,
        })),
        services: Object.fromEntries(
          system.services.map((s, i) => [s, system.ports?.[s] ?? NETNS_PORT_BASE + i]),
        ),
        registry,
      });
    } else
      net =
        setup.network === 'proxy'
          ? await ProxyBackend.create({
              nodes: NODES,
              services: system.services,
              peerServices: system.peerServices,
              seed: 1,
            })
          : await NetnsBackend.create({
              runId,
              nodes: NODES,
              services: Object.fromEntries(
                system.services.map((s, i) => [s, system.ports?.[s] ?? NETNS_PORT_BASE + i]),
              ),
              peerServices: system.peerServices,
              registry,
            });
    cluster = new Cluster({
      system,
      nodes: NODES,
      runDir: root,
      runId,
      network: net,
      registry,
      ...(net.layout ? { layout: net.layout() } : {}),
    });
    const obs = new Observation(root, NODES, system);
    observation = obs;
    await obs.watchNetwork(net, registry);
    // The moment each node's probe file was last written (its inotify notification).
    const written = new Map<string, number>();
    const ingested = new Map<Event, number>();
    obs.onEvent((e) => {
      ingested.set(e, monoNs());
    });
    await cluster.startAll();
    obs.start();
    if (!(await cluster.waitReady(READY_MS))) throw new Error(`${setup.name}: not ready`);
    for (const node of NODES) {
      try {
        watchers.push(
          watch(join(root, 'nodes', node, 'probe.jsonl'), () => {
            written.set(node, monoNs());
          }),
        );
      } catch {
        // no probe file (etcd): no write stamp
      }
    }
    const live = cluster;
    const nemesis = new Nemesis(live, net, system, new Rng(1), ['partition', 'kill', 'pause']);
    console.log(
      `\n${setup.name}: ${SAMPLES} samples per fault, on "${setup.on}" (${setup.source}); ms, median / p90`,
    );
    console.log(
      `  fault                 n   total            write          read           match          enact`,
    );
    for (const f of setup.faults) {
      const samples: Sample[] = [];
      let missed = 0;
      for (let i = 0; i < (f === 'kill' ? Math.ceil(SAMPLES / 2) : SAMPLES); i++) {
        const action: TriggeredAction = {
          on: setup.on,
          f,
          target: f === 'start-partition' ? 'isolate' : 'event',
          delayMs: 0,
        };
        let sample: Sample | undefined;
        const done = new AbortController();
        const start = Date.now();
        const trigger = new ArmedTrigger(action, 0, ARM_MS, {
          leader: () => nemesis.leader(),
          nodes: () => live.nodes,
          running: () => live.nodesIn('running'),
          onEvent: (l) =>
            obs.onEvent((e) => {
              // Only events stamped after arming (a backlog read late would not be a reaction).
              if (e.ts >= armedNs && e.source === setup.source) l(e);
            }),
          skip: () => undefined,
          // Ended once the fault is in effect: a sample does not wait out the arming time.
          signal: done.signal,
          enact: async (fault, recorded) => {
            const atNemesis = monoNs();
            const outcome = await nemesis.enact(fault, recorded);
            const inEffect = monoNs();
            const event = firstEvent!;
            const read = ingested.get(event) ?? atNemesis;
            const w = event.source === 'probe' ? written.get(event.node) : undefined;
            sample =
              outcome.outcome === 'ok'
                ? {
                    write: w !== undefined && w >= event.ts && w <= read ? (w - event.ts) / MS : undefined,
                    read: (read - (w !== undefined && w >= event.ts && w <= read ? w : event.ts)) / MS,
                    match: (atNemesis - read) / MS,
                    enact: (inEffect - atNemesis) / MS,
                    total: (inEffect - event.ts) / MS,
                  }
                : undefined;
            done.abort();
          },
        });
        let firstEvent: Event | undefined;
        // Events count from once the trigger is surely armed (its runner arms on a timer's turn).
        let armedNs = Infinity;
        const unsub = obs.onEvent((e) => {
          if (
            firstEvent === undefined &&
            e.type === setup.on &&
            e.source === setup.source &&
            e.ts >= armedNs
          ) {
            firstEvent = e;
          }
        });
        // The stamp listener must run before the trigger's: subscribed first, above.
        const running = trigger.run(start);
        await sleep(ARMING_MS);
        armedNs = monoNs();
        await running;
        unsub();
        if (sample) samples.push(sample);
        else missed++;
        ingested.clear();
        await nemesis.enact({
          f: f === 'start-partition' ? 'stop-partition' : f === 'kill' ? 'start' : 'resume',
          value: 'all',
        });
        if (f === 'kill') await live.waitReady(READY_MS);
        await sleep(SETTLE_MS);
      }
      const col = (k: keyof Sample): number[] =>
        samples.map((s) => s[k]).filter((x): x is number => x !== undefined);
      console.log(
        `  ${f.padEnd(18)} ${String(samples.length).padStart(3)}   ${fmt(col('total'))}   ${fmt(col('write'))}   ${fmt(col('read'))}   ${fmt(col('match'))}   ${fmt(col('enact'))}${missed > 0 ? `   (${missed} missed)` : ''}`,
      );
    }
  } finally {
    process.off('SIGINT', stop).off('SIGTERM', stop);
    for (const w of watchers) w.close();
    await observation?.stop().catch(() => undefined);
    await cluster?.close().catch(() => undefined);
    await net?.close().catch(() => undefined);
    await sshHosts?.close().catch(() => undefined);
    registry.releaseAll();
    delete process.env.MALLORY_STATE_DIR;
    rmSync(root, { recursive: true, force: true });
  }
}

const root = process.getuid?.() === 0;
for (const setup of SETUPS) {
  if (!NETWORKS.includes(setup.network)) continue;
  if (setup.network === 'netns' && !root) {
    console.log(`\n${setup.name}: skipped (namespaces need root)`);
    continue;
  }
  const noHosts = setup.network === 'hosts' ? sshHostsUnavailable() : undefined;
  if (noHosts !== undefined) {
    console.log(`\n${setup.name}: skipped (${noHosts})`);
    continue;
  }
  const missing = (await setup.system.doctor()).find((d) => !d.ok);
  if (missing) {
    console.log(`\n${setup.name}: skipped (${missing.what}${missing.fix ? `: ${missing.fix}` : ''})`);
    continue;
  }
  await measure(setup);
}
