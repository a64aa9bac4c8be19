/** Where an observation came from. */
export type EventSource = 'net' | 'log' | 'probe' | 'client' | 'nemesis';

export type EventAttrs = Readonly<Record<string, number | string>>;

/**
 * An observation on the host's one monotonic clock (`ts` in ns, CLOCK_MONOTONIC: the same clock in
 * every process on the host, so node processes can stamp their own events).
 * Network events have `type: send | recv` and `attrs: {peer, msg, bytes}`; the same `msg` on a send
 * and a recv is a happens-before edge.
 */
export interface Event {
  readonly ts: number;
  readonly node: string;
  readonly source: EventSource;
  readonly type: string;
  readonly attrs?: EventAttrs;
}
