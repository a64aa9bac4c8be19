import { PassThrough } from 'node:stream';

import type { NodeRuntime } from '../../cluster/runtime/runtime.js';
import { wallClockNs, within } from '../../core/clock.js';
import type { ClockSample } from './clock-offset.js';

/** How long one reading may take before the readings stop. */
const READING_TIMEOUT_MS = 30_000;

/**
 * Reads `runtime`'s host wall clock `count` times in one shell (`read; date +%s%N` in a loop, a
 * live `exec`), each reading bracketed by this machine's wall clock when asked and when answered:
 * the shell is started once, so a round trip is the command channel's, not a process start's.
 */
export async function clockReadings(runtime: NodeRuntime, count: number): Promise<ClockSample[]> {
  const input = new PassThrough();
  const abort = new AbortController();
  let buffered = '';
  let answered: ((line: string) => void) | undefined;
  const closed = runtime
    .exec(['sh', '-c', `i=0; while [ $i -lt ${count} ] && read x; do date +%s%N; i=$((i+1)); done`], {
      input,
      signal: abort.signal,
      onStdout: (d) => {
        buffered += d.toString();
        const end = buffered.indexOf('\n');
        if (end >= 0 && answered) {
          const line = buffered.slice(0, end);
          buffered = buffered.slice(end + 1);
          answered(line);
        }
      },
    })
    .then(
      () => '',
      () => '',
    );
  const readings: ClockSample[] = [];
  try {
    for (let i = 0; i < count; i++) {
      const reply = new Promise<string>((resolve) => (answered = resolve));
      const sentNs = wallClockNs();
      input.write('\n');
      const line = await within(Promise.race([reply, closed]), READING_TIMEOUT_MS, '');
      const receivedNs = wallClockNs();
      const hostNs = Number(line.trim());
      if (line === '' || !Number.isFinite(hostNs)) break;
      readings.push({ sentNs, hostNs, receivedNs });
    }
  } finally {
    input.end();
    abort.abort();
  }
  return readings;
}
