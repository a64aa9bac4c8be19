import type { Event } from '../../core/event.js';
import type { PacketParams } from '../../core/fault.js';
import type { NodeLayout } from '../runtime/node-layout.js';
import type { NodeRuntime } from '../runtime/runtime.js';

export interface Address {
  readonly host: string;
  readonly port: number;
}

/** A directed link: traffic that `from` sends to `to`. */
export type Link = readonly [from: string, to: string];

/**
 * How node processes reach each other, and how the nemesis cuts and degrades the links between
 * them. `proxy` (no root): one userspace TCP proxy per directed link on loopback. `netns` (root):
 * one network namespace per node on a bridge, iptables for cuts and loss.
 */
export interface NetworkBackend {
  readonly kind: 'proxy' | 'netns' | 'hosts' | 'containers' | 'sim';
  /** Where the nodes run when it is not this machine: the runtimes the backend connected to. */
  layout?(): NodeLayout;
  /** The address node `node` binds for a service. */
  listen(node: string, service: string): Address;
  /** The address node `from` dials to reach `to`'s service (a proxy, or `to`'s own address). */
  dial(from: string, to: string, service: string): Address;
  /** The address the fuzzer's clients use to reach `node`'s service. */
  clientAddress(node: string, service: string): Address;
  /** Prefix for a node's command line (e.g. `ip netns exec NS`), empty when none is needed. */
  commandPrefix(node: string): readonly string[];
  /** Cuts exactly these directed links (replacing any previous cut). */
  cut(links: readonly Link[]): Promise<void>;
  /** Delay, loss or duplication on these directed links (replacing previous ones). */
  degrade(links: readonly Link[], params: PacketParams): Promise<void>;
  /** Removes every cut and degradation. */
  heal(): Promise<void>;
  /**
   * When this backend itself reset `node`'s open connections to other nodes (monotonic ns, oldest
   * first), for a delay it emulates by redirecting connections through a proxy: the connections
   * open before (cut so new ones take the proxy) and those through a proxy it stops. A real delay
   * (netem, a relaying proxy) resets nothing: absent or empty.
   */
  connectionCuts?(node: string): readonly number[];
  /**
   * Network events (send/recv between nodes) go here, from a backend that relays the traffic itself
   * (the proxies); one that does not offers a `captureTap` to observe it instead.
   */
  onEvent?(listener: (event: Event) => void): void;
  /** Where packet capture (observe/capture.ts) can watch the traffic between nodes. */
  captureTap?(): CaptureTap;
  /** Where packet capture runs on each host, when the nodes are on other hosts (observe/capture.ts). */
  hostCaptureTap?(): HostCaptureTap;
  close(): Promise<void>;
}

/** An interface that carries every node-to-node packet, and whose address is whose. */
export interface CaptureTap {
  /** Where the interface is (this machine, for the namespaces' hub). */
  readonly runtime: NodeRuntime;
  /** The command prefix that runs a program where the interface is (e.g. `ip netns exec HUB`). */
  readonly prefix: readonly string[];
  readonly iface: string;
  /** Hosts whose traffic is not between nodes (the fuzzer's own clients). */
  readonly exclude: readonly string[];
  /** The node that has address `ip`, if any. */
  nodeAt(ip: string): string | undefined;
}

/** Each node's host, where a capture of that node's traffic with the other nodes can run. */
export interface HostCaptureTap {
  readonly nodes: readonly string[];
  /** The connection to `node`'s host. */
  runtime(node: string): NodeRuntime;
  /** `node`'s address (its host's). */
  address(node: string): string;
  /** The device `node`'s host reaches the other nodes on. */
  device(node: string): Promise<string>;
  /** The system's ports: traffic between nodes is to or from one of them. */
  readonly ports: readonly number[];
  /** Makes the run's dir on `node`'s host and gives it (pid files go there). */
  prepare(node: string): Promise<string>;
  /** The node that has address `ip`, if any. */
  nodeAt(ip: string): string | undefined;
}
