/** One reading of a host's wall clock, bracketed by the fuzzer's clock before and after. */
export interface ClockSample {
  /** The fuzzer's wall clock (ns since the epoch) when the reading was asked for. */
  readonly sentNs: number;
  /** The host's wall clock (ns since the epoch) as it answered. */
  readonly hostNs: number;
  /** The fuzzer's wall clock when the answer arrived. */
  readonly receivedNs: number;
}

/**
 * A host's clock against the fuzzer's: host time − fuzzer time, within ± `errorNs` (and the 256 ns
 * steps of a wall-clock ns as a JS number).
 */
export interface ClockOffset {
  readonly offsetNs: number;
  /** Half the round trip of the sample it came from: the host read its clock within it. */
  readonly errorNs: number;
}

/**
 * The host's clock offset from round trips (Cristian's method): the host read its clock somewhere
 * between sending and receiving, taken as the middle; the sample with the shortest round trip
 * bounds that guess best.
 */
export function clockOffset(samples: readonly ClockSample[]): ClockOffset {
  if (samples.length === 0) throw new Error('clockOffset needs at least one sample');
  let best = samples[0];
  for (const s of samples) if (s.receivedNs - s.sentNs < best.receivedNs - best.sentNs) best = s;
  const middle = (best.sentNs + best.receivedNs) / 2;
  return {
    offsetNs: Math.round(best.hostNs - middle),
    errorNs: Math.round((best.receivedNs - best.sentNs) / 2),
  };
}

/** A time stamped by the host's clock, on the fuzzer's clock. */
export function toFuzzerNs(hostNs: number, offset: ClockOffset): number {
  return hostNs - offset.offsetNs;
}
