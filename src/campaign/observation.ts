import { join } from 'node:path';

import { InvariantEvents } from '../check/invariants.js';
import type { NetworkBackend } from '../cluster/net/backend.js';
import type { ResourceRegistry } from '../cluster/resources.js';
import { type Clock, realClock } from '../core/clock.js';
import type { Event } from '../core/event.js';
import { PacketCapture } from '../observe/capture.js';
import { type LogEvents, logEventsFor } from '../observe/log-events.js';
import { parseProbeLine } from '../observe/probe-events.js';
import { FileTail } from '../observe/tail.js';
import type { SystemAdapter } from '../systems/system.js';
import { Timeline } from '../timeline/timeline.js';

/** A bound on the events kept per schedule for the invariant checks. */
const MAX_SCHEDULE_EVENTS = 500_000;

/**
 * Every event source of a run feeding one timeline: each node's output (per-system parser, else
 * log-template mining), each node's probe file, the messages between nodes (the proxies' own
 * events, or packet capture on the network's tap), and whatever the campaign ingests directly
 * (client and nemesis ops).
 */
export class Observation {
  readonly timeline: Timeline;
  readonly logEvents: LogEvents;
  private readonly tails: FileTail[] = [];
  private scheduleEvents: Event[] = [];
  private readonly invariantEvents = new InvariantEvents();
  private timelineOn = true;
  private readonly listeners = new Set<(event: Event) => void>();
  private capture: PacketCapture | undefined;
  private netEventCount = 0;
  /**
   * The log event types by which a node says the leader changed, or (a declared split brain) that it
   * was promoted, started in a role or took the leader's data (`SystemAdapter.failoverLoss`).
   */
  private readonly leaderChangeTypes: ReadonlySet<string>;

  constructor(
    private readonly runDir: string,
    private readonly nodes: readonly string[],
    system: SystemAdapter,
    /** The clock the timeline's windows close by (default the host's). */
    clock: Clock = realClock,
  ) {
    this.timeline = new Timeline({ clock });
    this.logEvents = logEventsFor(system);
    // The role events of a declared split brain too: without its starts as leader and its
    // convergences, a node promoted once would lead on its own data to the end of the schedule.
    const sb = system.failoverLoss?.splitBrain;
    this.leaderChangeTypes = new Set([
      ...(system.failoverLoss?.events ?? []),
      ...(sb !== undefined ? [sb.promoted, sb.started, ...sb.converged] : []),
    ]);
  }

  start(): void {
    for (const node of this.nodes) {
      const dir = join(this.runDir, 'nodes', node);
      for (const stream of ['stdout.log', 'stderr.log']) {
        this.tails.push(
          new FileTail(join(dir, stream), (line, ts) => {
            const event = this.logEvents.toEvent(node, line, ts);
            if (event) this.ingest(event);
          }),
        );
      }
      this.tails.push(
        new FileTail(join(dir, 'probe.jsonl'), (line) => {
          const event = parseProbeLine(node, line);
          if (event) this.ingest(event);
        }),
      );
    }
    for (const tail of this.tails) tail.start();
  }

  /**
   * Observes the messages between nodes: the events of a network that relays them itself, else
   * packet capture on its tap, or on each host when the nodes are on other hosts (resolves once
   * the capture listens).
   */
  async watchNetwork(network: NetworkBackend, registry: ResourceRegistry): Promise<void> {
    network.onEvent?.((event) => {
      this.ingest(event);
    });
    const emit = (event: Event): void => {
      this.ingest(event);
    };
    const tap = network.captureTap?.();
    const hosts = network.hostCaptureTap?.();
    if (tap) this.capture = await PacketCapture.start(tap, registry, emit);
    else if (hosts) this.capture = await PacketCapture.startOnHosts(hosts, registry, emit);
  }

  /** Network events (send/recv between nodes) seen so far, from any source. */
  get netEvents(): number {
    return this.netEventCount;
  }

  /** Calls `listener` with every event as it is ingested; returns the unsubscribe. */
  onEvent(listener: (event: Event) => void): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  /**
   * Whether events go to the timeline. Off between schedules (heal, recovery, checks) and under a
   * fixed schedule, when no window is cut: they would only pile up until the next schedule.
   */
  setTimeline(on: boolean): void {
    this.timelineOn = on;
  }

  ingest(event: Event): void {
    if (event.source === 'net') this.netEventCount++;
    if (this.timelineOn) this.timeline.ingest(event);
    for (const listener of this.listeners) listener(event);
    const leaderChange = event.source === 'log' && this.leaderChangeTypes.has(event.type);
    if (
      (this.invariantEvents.keep(event) || leaderChange) &&
      this.scheduleEvents.length < MAX_SCHEDULE_EVENTS
    ) {
      this.scheduleEvents.push(event);
    }
  }

  /**
   * The events since the last call that the invariant checks need, and the leader changes and
   * split-brain role events the system declares (one schedule's).
   */
  takeScheduleEvents(): Event[] {
    const events = this.scheduleEvents;
    this.scheduleEvents = [];
    return events;
  }

  async stop(): Promise<void> {
    await this.capture?.close();
    await Promise.all(this.tails.map((t) => t.stop(false)));
  }
}
