import { closeSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { join } from 'node:path';

import type { Event } from '../../core/event.js';
import { UsageError } from '../../core/errors.js';
import type { TornGranularity } from '../../core/fault.js';
import { logSizes } from '../../check/logs.js';
import { NodeClocks } from '../../nemesis/clock.js';
import { NodeDisks } from '../../nemesis/disk.js';
import { SIM_LACKS_DISK_KINDS, SimDiskLayer } from '../../sim/sim-disk-layer.js';
import { isLet, type ScheduleItem } from '../schedule-file.js';
import { SimCluster } from '../../sim/sim-cluster.js';
import { SimKvraft } from '../../sim/kvraft.js';
import { SimNetworkBackend } from '../../sim/sim-network-backend.js';
import { WorldClock } from '../../sim/world-clock.js';
import type { KvraftBug } from '../../systems/kvraft/bugs.js';
import { kvraftAdapter } from '../../systems/kvraft/index.js';
import type { SystemAdapter } from '../../systems/system.js';
import type { RunConfig } from '../config.js';
import type { Observation } from '../observation.js';

/** The one system whose node code runs in the simulated world (through its seams). */
export const SIM_SYSTEM = 'kvraft';
const NS_PER_MS = 1e6;

/** A simulated run's world, chosen with the plan: kvraft's nodes, the world's clock, the adapter on its sockets. */
export interface SimWorld {
  readonly kv: SimKvraft;
  readonly clock: WorldClock;
  readonly system: SystemAdapter;
}

/**
 * What `--sim` cannot go with, refused in one line before anything is made: another system, nodes
 * on hosts or in containers, a checkpoint's real data dirs, and a schedule's slow-disk line (a slow disk costs CPU time, which is zero in the world).
 */
export function refuseSim(config: RunConfig, system: string, schedules?: readonly ScheduleItem[][]): void {
  const refuse = (why: string): never => {
    throw new UsageError('bad-flag', `--sim: ${why}`);
  };
  if (system !== SIM_SYSTEM)
    refuse(
      `the simulator runs kvraft's own node code only, not ${system}: drop --sim or use --system kvraft`,
    );
  if (config.hosts !== undefined || config.containers !== undefined)
    refuse('the nodes run in this process: drop --hosts');
  if (config.checkpoint !== undefined) refuse('a checkpoint holds real data dirs: drop --from-checkpoint');
  (schedules ?? []).forEach((items, i) => {
    const slow = items.find(
      (item) => !isLet(item) && (SIM_LACKS_DISK_KINDS as readonly string[]).includes(item.f),
    );
    if (slow !== undefined && !isLet(slow))
      refuse(
        `${config.schedule?.[i] ?? 'the schedule'}: ${slow.f} at ${slow.atMs} ms is not simulated (a slow disk costs CPU time, which is zero in the simulator): remove the line`,
      );
  });
}

/** The world of a simulated run: seeded by the run's seed, its disks keeping what `contract` says. */
export function simWorld(
  config: RunConfig,
  options: { readonly seed: number; readonly nodes: number; readonly bugs: readonly string[] },
): SimWorld {
  const kv = new SimKvraft({
    seed: options.seed,
    nodes: options.nodes,
    contract: config.sim?.contract ?? 'C2',
    // `--network netns` gives iptables' semantics to cuts (bytes held); else the proxies' (reset).
    partitionMode: config.network === 'netns' ? 'netns' : 'proxy',
  });
  const clock = new WorldClock(kv.world);
  return { kv, clock, system: kvraftAdapter(options.bugs, kv.clientIo, clock) };
}

/**
 * The world's clocks and disks as the clock and disk families drive them: a node's wall clock is
 * virtual time plus the offset the nemesis sets (drift and strobe ticking on the world's clock),
 * its disk the world's, crashed, torn and failed by the world's own events under the run's
 * storage contract.
 */
export function simDevices(
  world: SimWorld,
  cluster: SimCluster,
  tornGranularity: TornGranularity,
): { readonly clocks: NodeClocks; readonly disks: NodeDisks } {
  const { clock } = world;
  const clocks = new NodeClocks(
    {
      write: (node, offsetMs) => {
        world.kv.world.setClockOffset(node, offsetMs);
      },
      settled: () => Promise.resolve(),
    },
    () => clock.nowMs(),
    (ms, tick) => clock.every(ms, tick),
  );
  const disks = new NodeDisks(
    new SimDiskLayer(world.kv.world),
    () => clock.monoNs(),
    (node) => logSizes(cluster.logDir(node)),
    tornGranularity,
    {
      after: (ms, run) => {
        clock.timer(ms, run);
      },
      lacks: SIM_LACKS_DISK_KINDS,
    },
  );
  return { clocks, disks };
}

/** The world's cluster and network as a run's parts, on the run's dir. */
export function simCluster(
  world: SimWorld,
  runDir: string,
  bugs: readonly string[],
): { readonly cluster: SimCluster; readonly network: SimNetworkBackend } {
  const cluster = new SimCluster(world.kv, world.clock, runDir, { bugs: bugs as readonly KvraftBug[] });
  cluster.attach(world.system);
  const network = new SimNetworkBackend(world.kv.world.network, (node) => world.kv.address(node));
  return { cluster, network };
}

/**
 * A simulated run's observation: the world pushes each probe event and output line, at its
 * virtual time, into the run's observers, and each is written where a real node's would be
 * (`nodes/<node>/stdout.log`, `stderr.log`, `probe.jsonl`), so the log check, the recovery
 * evidence and the report read what they read of a real run.
 */
export class SimOutput {
  private readonly fds = new Map<string, number>();
  private closed = false;

  constructor(
    world: SimWorld,
    private readonly runDir: string,
    observation: Observation,
  ) {
    const { kv } = world;
    kv.world.onObserve((o) => {
      if (this.closed) return;
      const ts = Math.round(o.timeMs * NS_PER_MS);
      const event: Event = o.attrs
        ? { ts, node: o.node, source: 'probe', type: o.type, attrs: o.attrs }
        : { ts, node: o.node, source: 'probe', type: o.type };
      this.write(
        o.node,
        'probe.jsonl',
        JSON.stringify({ ts, type: o.type, ...(o.attrs ? { attrs: o.attrs } : {}) }),
      );
      observation.ingest(event);
    });
    kv.world.onPrinted((p) => {
      if (this.closed || !kv.nodes.includes(p.host)) return;
      this.write(p.host, `${p.stream}.log`, p.line);
      const event = observation.logEvents.toEvent(p.host, p.line, Math.round(p.timeMs * NS_PER_MS));
      if (event) observation.ingest(event);
    });
  }

  private write(node: string, file: string, line: string): void {
    const path = join(this.runDir, 'nodes', node, file);
    let fd = this.fds.get(path);
    if (fd === undefined) {
      mkdirSync(join(this.runDir, 'nodes', node), { recursive: true });
      fd = openSync(path, 'a');
      this.fds.set(path, fd);
    }
    writeSync(fd, `${line}\n`);
  }

  close(): void {
    this.closed = true;
    for (const fd of this.fds.values()) closeSync(fd);
    this.fds.clear();
  }
}
