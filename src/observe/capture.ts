import { join } from 'node:path';

import type { CaptureTap, HostCaptureTap } from '../cluster/net/backend.js';
import type { ResourceRegistry } from '../cluster/resources.js';
import type { NodeRuntime } from '../cluster/runtime/runtime.js';
import { startStreaming, type StreamingProcess } from '../cluster/runtime/streaming.js';
import { monoNs, NS_PER_MS, wallClockNs, within } from '../core/clock.js';
import type { Event } from '../core/event.js';
import { type ClockOffset, clockOffset, toFuzzerNs } from './_internals/clock-offset.js';
import { clockReadings } from './_internals/clock-readings.js';
import { PcapParser, type TcpSegment } from './_internals/pcap.js';

const CAPTURE_READY_TIMEOUT_MS = 10_000;
/** Headers are all we read: the payload's length comes from the IP header. */
const CAPTURE_SNAPLEN_BYTES = 128;
/** Round trips per host for its clock offset (the shortest is kept). */
const CLOCK_SAMPLES = 5;
/** The offset of a clock that is this machine's. */
const NO_OFFSET: ClockOffset = { offsetNs: 0, errorNs: 0 };

/** One tcpdump: where it runs, on what, and what its segments are. */
interface CapturePoint {
  readonly runtime: NodeRuntime;
  /** The command prefix that runs a program where the interface is (e.g. `ip netns exec HUB`). */
  readonly prefix: readonly string[];
  readonly iface: string;
  readonly filter: string;
  readonly label: string;
  readonly pidFile?: string;
  /** The node whose traffic it is, when it is one node's. */
  readonly node?: string;
  /** A segment as events, `ts` its time on the fuzzer's monotonic clock. */
  events(segment: TcpSegment, ts: number): Event[];
}

/** A started tcpdump and its host's clock offset. */
interface Running {
  readonly point: CapturePoint;
  readonly process: StreamingProcess;
  readonly offset: ClockOffset;
}

/**
 * Packet capture, the observer of the messages between nodes when the network does not relay them
 * itself: tcpdump where the traffic passes, its pcap stream parsed as it arrives, each TCP segment
 * with a payload from one node to another becoming a `net` `send` event on the sender and a `recv`
 * event on the receiver sharing a `msg` id. Written once over the node runtime: on the namespaces'
 * tap (one tcpdump on this machine) or on each node's host (one per node, each of its host's
 * clock, corrected by the offset measured when the capture started unless the runtime shares this
 * machine's clock). Each tcpdump is recorded in the run's registry as a node is, and ended by
 * `close` or by `mallory cleanup`.
 */
export class PacketCapture {
  private closed = false;

  private constructor(private readonly running: readonly Running[]) {}

  /** Starts tcpdump on the namespaces' `tap` and resolves once it listens; every event goes to `emit`. */
  static start(
    tap: CaptureTap,
    registry: ResourceRegistry,
    emit: (event: Event) => void,
  ): Promise<PacketCapture> {
    const filter = ['tcp', ...tap.exclude.map((host) => `and not host ${host}`)].join(' ');
    const point: CapturePoint = {
      runtime: tap.runtime,
      prefix: tap.prefix,
      iface: tap.iface,
      filter,
      label: 'tcpdump',
      events: (segment, ts) => tapEvents(segment, tap, ts),
    };
    return PacketCapture.startAll([Promise.resolve(point)], registry, emit);
  }

  /** Starts tcpdump on every node's host and resolves once each listens; every event goes to `emit`. */
  static startOnHosts(
    tap: HostCaptureTap,
    registry: ResourceRegistry,
    emit: (event: Event) => void,
  ): Promise<PacketCapture> {
    return PacketCapture.startAll(
      tap.nodes.map((node) => hostPoint(tap, node)),
      registry,
      emit,
    );
  }

  private static async startAll(
    points: readonly Promise<CapturePoint>[],
    registry: ResourceRegistry,
    emit: (event: Event) => void,
  ): Promise<PacketCapture> {
    const results = await Promise.allSettled(points.map(async (p) => startOne(await p, registry, emit)));
    const started = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
    const failed = results.find((r) => r.status === 'rejected');
    if (failed) {
      await Promise.all(started.map((c) => c.process.stop().catch(() => undefined)));
      throw failed.reason;
    }
    return new PacketCapture(started);
  }

  /** Each node's host clock offset (ns, host − fuzzer) and its bound, for captures of one node's traffic. */
  offsets(): Record<string, ClockOffset> {
    return Object.fromEntries(
      this.running.flatMap((c) => (c.point.node === undefined ? [] : [[c.point.node, c.offset]])),
    );
  }

  /** Ends every tcpdump (by its recorded pid) and forgets it once it has ended. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all(this.running.map((c) => c.process.stop().catch(() => undefined)));
  }
}

/** The capture of `node`'s traffic with the other nodes (the system's ports) on its host. */
async function hostPoint(tap: HostCaptureTap, node: string): Promise<CapturePoint> {
  const own = tap.address(node);
  const peers = tap.nodes.filter((n) => n !== node).map((n) => tap.address(n));
  const [device, root] = await Promise.all([tap.device(node), tap.prepare(node)]);
  const filter =
    `tcp and host ${own}` +
    (peers.length > 0 ? ` and (${peers.map((p) => `host ${p}`).join(' or ')})` : '') +
    (tap.ports.length > 0 ? ` and (${tap.ports.map((p) => `port ${p}`).join(' or ')})` : '');
  return {
    runtime: tap.runtime(node),
    prefix: [],
    iface: device,
    filter,
    label: `tcpdump of ${node}`,
    pidFile: join(root, `.pid-capture-${node}`),
    node,
    events: (segment, ts) => nodeEvents(segment, node, own, tap, ts),
  };
}

/**
 * `runtime`'s host clock offset: none when it shares this machine's clock, else read
 * `CLOCK_SAMPLES` times and taken from the shortest round trip.
 */
export async function hostClockOffset(runtime: NodeRuntime, samples = CLOCK_SAMPLES): Promise<ClockOffset> {
  if (runtime.capabilities.sharedClock) return NO_OFFSET;
  const taken = await clockReadings(runtime, samples);
  if (taken.length === 0) throw new Error(`host ${runtime.host}: cannot read its clock (date +%s%N)`);
  return clockOffset(taken);
}

async function startOne(
  point: CapturePoint,
  registry: ResourceRegistry,
  emit: (event: Event) => void,
): Promise<Running> {
  const { runtime } = point;
  const offset = await hostClockOffset(runtime);
  const argv = [
    ...point.prefix,
    'tcpdump',
    '--immediate-mode',
    '-i',
    point.iface,
    '-w',
    '-',
    '-U',
    '-n',
    '-s',
    String(CAPTURE_SNAPLEN_BYTES),
    point.filter,
  ];
  // pcap stamps the host's wall clock; events carry the fuzzer's monotonic clock. A clock that is
  // this machine's is read as the system's (the offset of another is measured against `wallClockNs`).
  const wallToMonoNs = monoNs() - (runtime.capabilities.sharedClock ? Date.now() * NS_PER_MS : wallClockNs());
  const parser = new PcapParser();
  let listening!: () => void;
  let stderr = '';
  const ready = new Promise<void>((resolve) => (listening = resolve));
  const proc = await startStreaming(
    runtime,
    {
      argv,
      label: point.label,
      ...(point.pidFile === undefined ? {} : { pidFile: point.pidFile }),
      onStdout: (chunk) => {
        for (const segment of parser.push(chunk)) {
          const ts = toFuzzerNs(segment.wallNs, offset) + wallToMonoNs;
          for (const event of point.events(segment, ts)) emit(event);
        }
      },
      onStderr: (text) => {
        stderr += text;
        if (stderr.includes('listening on')) listening();
      },
    },
    registry,
  );
  const outcome = await within(
    Promise.race([ready.then(() => 'ready' as const), proc.ended.then(() => 'ended' as const)]),
    CAPTURE_READY_TIMEOUT_MS,
    'timeout' as const,
  );
  if (outcome !== 'ready') {
    await proc.stop().catch(() => undefined);
    const why = outcome === 'ended' ? 'exited' : `did not start within ${CAPTURE_READY_TIMEOUT_MS} ms`;
    throw new Error(
      `host ${runtime.host}: tcpdump ${why}: ${stderr.trim() || 'no output'} (apt-get install -y tcpdump there)`,
    );
  }
  return { point, process: proc, offset };
}

/** A segment on the tap between two nodes as the sender's `send` and the receiver's `recv`. */
function tapEvents(segment: TcpSegment, tap: CaptureTap, ts: number): Event[] {
  const from = tap.nodeAt(segment.src);
  const to = tap.nodeAt(segment.dst);
  if (from === undefined || to === undefined) return [];
  const at = Math.round(ts);
  const msg = `${segment.src}:${segment.srcPort}>${segment.dst}:${segment.dstPort}/${segment.seq}`;
  const bytes = segment.payloadBytes;
  return [
    { ts: at, node: from, source: 'net', type: 'send', attrs: { peer: to, msg, bytes } },
    { ts: at + 1, node: to, source: 'net', type: 'recv', attrs: { peer: from, msg, bytes } },
  ];
}

/** A segment of `node`'s as its `send` (it is the source) or its `recv` (the destination). */
function nodeEvents(
  segment: TcpSegment,
  node: string,
  own: string,
  tap: HostCaptureTap,
  ts: number,
): Event[] {
  const sent = segment.src === own;
  const peer = tap.nodeAt(sent ? segment.dst : segment.src);
  if (peer === undefined || (!sent && segment.dst !== own)) return [];
  const msg = `${segment.src}:${segment.srcPort}>${segment.dst}:${segment.dstPort}/${segment.seq}`;
  return [
    {
      ts: Math.round(ts),
      node,
      source: 'net',
      type: sent ? 'send' : 'recv',
      attrs: { peer, msg, bytes: segment.payloadBytes },
    },
  ];
}
