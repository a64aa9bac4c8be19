import { join } from 'node:path';

import type { HostCaptureTap } from '../cluster/net/backend.js';
import type { ResourceRegistry } from '../cluster/resources.js';
import type { SshHost, StreamingProcess } from '../cluster/runtime/ssh.js';
import { monoNs, wallClockNs, within } from '../core/clock.js';
import type { Event } from '../core/event.js';
import { type ClockOffset, type ClockSample, clockOffset, toFuzzerNs } from './_internals/clock-offset.js';
import { PcapParser, type TcpSegment } from './_internals/pcap.js';

const CAPTURE_READY_TIMEOUT_MS = 10_000;
/** Headers are all we read: the payload's length comes from the IP header. */
const CAPTURE_SNAPLEN_BYTES = 128;
/** Round trips per host for its clock offset (the shortest is kept). */
const CLOCK_SAMPLES = 5;

/** One host's capture and what it is known by. */
interface HostCapture {
  readonly node: string;
  readonly host: string;
  readonly process: StreamingProcess;
  readonly offset: ClockOffset;
}

/**
 * Reads `runtime`'s host clock `CLOCK_SAMPLES` times over SSH (in one shell on one channel), each
 * bracketed by the fuzzer's own wall clock, and gives the host's offset from the shortest round trip.
 */
export async function hostClockOffset(runtime: SshHost, samples = CLOCK_SAMPLES): Promise<ClockOffset> {
  const taken: ClockSample[] = await runtime.clockReadings(samples);
  if (taken.length === 0) throw new Error(`host ${runtime.host}: cannot read its clock (date +%s%N)`);
  return clockOffset(taken);
}

/**
 * Packet capture on hosts reached over SSH: on each node's host, tcpdump on the device to the
 * other nodes writes the pcap stream of that node's traffic with them (the system's ports) to its
 * stdout, which comes back over the SSH exec channel and is parsed as it arrives. A segment the
 * node sent is a `send` event on it, one it received a `recv` event, each stamped by its own
 * host's clock corrected by the offset measured when the capture started, so one message's `send`
 * and `recv` share a `msg` id and come from the two hosts that saw them. Each tcpdump is recorded
 * in the run's registry as a node is, and ended by `close` or by cleanup.
 */
export class HostPacketCapture {
  private closed = false;

  private constructor(private readonly captures: readonly HostCapture[]) {}

  /** Each host's clock offset (ns, host − fuzzer) and its bound, by node. */
  offsets(): Record<string, ClockOffset> {
    return Object.fromEntries(this.captures.map((c) => [c.node, c.offset]));
  }

  /** Starts tcpdump on every host and resolves once each listens; every event goes to `emit`. */
  static async start(
    tap: HostCaptureTap,
    registry: ResourceRegistry,
    emit: (event: Event) => void,
  ): Promise<HostPacketCapture> {
    const results = await Promise.allSettled(tap.nodes.map((node) => startOne(tap, node, registry, emit)));
    const started = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
    const failed = results.find((r) => r.status === 'rejected');
    if (failed) {
      await Promise.all(started.map((c) => c.process.stop().catch(() => undefined)));
      throw failed.reason;
    }
    return new HostPacketCapture(started);
  }

  /** Ends every host's tcpdump (by its recorded pid) and forgets it once its channel closed. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all(this.captures.map((c) => c.process.stop().catch(() => undefined)));
  }
}

async function startOne(
  tap: HostCaptureTap,
  node: string,
  registry: ResourceRegistry,
  emit: (event: Event) => void,
): Promise<HostCapture> {
  const runtime = tap.runtime(node);
  const own = tap.address(node);
  const peers = tap.nodes.filter((n) => n !== node).map((n) => tap.address(n));
  const [device, root, offset] = await Promise.all([
    tap.device(node),
    tap.prepare(node),
    hostClockOffset(runtime),
  ]);
  const filter =
    `tcp and host ${own}` +
    (peers.length > 0 ? ` and (${peers.map((p) => `host ${p}`).join(' or ')})` : '') +
    (tap.ports.length > 0 ? ` and (${tap.ports.map((p) => `port ${p}`).join(' or ')})` : '');
  const argv = [
    'tcpdump',
    '--immediate-mode',
    '-i',
    device,
    '-w',
    '-',
    '-U',
    '-n',
    '-s',
    String(CAPTURE_SNAPLEN_BYTES),
    filter,
  ];
  // pcap stamps the host's wall clock; events carry the fuzzer's monotonic clock.
  const wallToMonoNs = monoNs() - wallClockNs();
  const parser = new PcapParser();
  let listening!: () => void;
  let stderr = '';
  const ready = new Promise<void>((resolve) => (listening = resolve));
  const proc = await runtime.startStreaming(
    argv,
    join(root, `.pid-capture-${node}`),
    registry,
    `tcpdump of ${node}`,
    (chunk) => {
      for (const segment of parser.push(chunk)) {
        const event = segmentEvent(
          segment,
          node,
          own,
          tap,
          toFuzzerNs(segment.wallNs, offset) + wallToMonoNs,
        );
        if (event) emit(event);
      }
    },
    (text) => {
      stderr += text;
      if (stderr.includes('listening on')) listening();
    },
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
  return { node, host: runtime.host, process: proc, offset };
}

/** A segment of `node`'s as its `send` (it is the source) or its `recv` (the destination). */
function segmentEvent(
  segment: TcpSegment,
  node: string,
  own: string,
  tap: HostCaptureTap,
  ts: number,
): Event | undefined {
  const sent = segment.src === own;
  const peer = tap.nodeAt(sent ? segment.dst : segment.src);
  if (peer === undefined || (!sent && segment.dst !== own)) return undefined;
  const msg = `${segment.src}:${segment.srcPort}>${segment.dst}:${segment.dstPort}/${segment.seq}`;
  return {
    ts: Math.round(ts),
    node,
    source: 'net',
    type: sent ? 'send' : 'recv',
    attrs: { peer, msg, bytes: segment.payloadBytes },
  };
}
