import { spawn } from 'node:child_process';

import type { CaptureTap } from '../cluster/net/backend.js';
import { processStartTime, type ResourceRegistry } from '../cluster/resources.js';
import { monoNs } from '../core/clock.js';
import type { Event } from '../core/event.js';
import { PcapParser, type TcpSegment } from './_internals/pcap.js';

const CAPTURE_READY_TIMEOUT_MS = 5_000;
/** Headers are all we read: the payload's length comes from the IP header. */
const CAPTURE_SNAPLEN_BYTES = 128;

/**
 * Packet capture, the observer of the messages between nodes when the network does not relay them
 * itself (namespaces): tcpdump on the network's tap, its pcap stream parsed as it arrives, each TCP
 * segment with a payload from one node to another becoming a `net` `send` event on the sender and a
 * `recv` event on the receiver sharing a `msg` id. tcpdump is recorded in the run's registry as
 * soon as it has a PID, so a crashed fuzzer's capture is ended by `mallory cleanup`.
 */
export class PacketCapture {
  private closed = false;

  private constructor(
    private readonly registry: ResourceRegistry,
    private readonly resourceId: number,
  ) {}

  /** Starts tcpdump on `tap` and resolves once it listens; every event goes to `emit`. */
  static async start(
    tap: CaptureTap,
    registry: ResourceRegistry,
    emit: (event: Event) => void,
  ): Promise<PacketCapture> {
    const filter = ['tcp', ...tap.exclude.map((host) => `and not host ${host}`)].join(' ');
    const argv = [
      ...tap.prefix,
      'tcpdump',
      '--immediate-mode',
      '-i',
      tap.iface,
      '-w',
      '-',
      '-U',
      '-n',
      '-s',
      String(CAPTURE_SNAPLEN_BYTES),
      filter,
    ];
    const child = spawn(argv[0], argv.slice(1), { detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    const pid = child.pid;
    if (pid === undefined) throw new Error('cannot start tcpdump: apt-get install -y tcpdump');
    const id = registry.record({
      kind: 'process',
      pid,
      startTime: processStartTime(pid) ?? '',
      label: 'tcpdump',
    });
    const capture = new PacketCapture(registry, id);
    child.unref();
    // pcap stamps wall-clock time; events carry the host's monotonic clock.
    const wallToMonoNs = monoNs() - Date.now() * 1e6;
    const parser = new PcapParser();
    child.stdout.on('data', (chunk: Buffer) => {
      for (const segment of parser.push(chunk)) {
        for (const event of segmentEvents(segment, tap, wallToMonoNs)) emit(event);
      }
    });
    try {
      await new Promise<void>((resolve, reject) => {
        let stderr = '';
        const timer = setTimeout(() => {
          reject(new Error(`tcpdump did not start within ${CAPTURE_READY_TIMEOUT_MS} ms: ${stderr.trim()}`));
        }, CAPTURE_READY_TIMEOUT_MS);
        child.stderr.on('data', (chunk: Buffer) => {
          stderr += chunk.toString();
          if (stderr.includes('listening on')) {
            clearTimeout(timer);
            resolve();
          }
        });
        child.once('exit', (code) => {
          clearTimeout(timer);
          if (!capture.closed) reject(new Error(`tcpdump exited (${code}): ${stderr.trim()}`));
        });
      });
    } catch (error) {
      capture.close();
      throw error;
    }
    return capture;
  }

  /** Ends tcpdump (by its recorded PID) and forgets it. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.registry.release(this.resourceId);
  }
}

/** A segment between two nodes as the sender's `send` and the receiver's `recv`; nothing otherwise. */
function segmentEvents(segment: TcpSegment, tap: CaptureTap, wallToMonoNs: number): Event[] {
  const from = tap.nodeAt(segment.src);
  const to = tap.nodeAt(segment.dst);
  if (from === undefined || to === undefined) return [];
  const ts = Math.round(segment.wallNs + wallToMonoNs);
  const msg = `${segment.src}:${segment.srcPort}>${segment.dst}:${segment.dstPort}/${segment.seq}`;
  const bytes = segment.payloadBytes;
  return [
    { ts, node: from, source: 'net', type: 'send', attrs: { peer: to, msg, bytes } },
    { ts: ts + 1, node: to, source: 'net', type: 'recv', attrs: { peer: from, msg, bytes } },
  ];
}
