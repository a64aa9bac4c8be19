import { appendFileSync } from 'node:fs';

/**
 * A test mode for proving that a fuzzer killed at any moment leaves nothing `mallory cleanup`
 * cannot remove. Every external command and every resource the run records is a point:
 * `MALLORY_CRASH_TRACE=FILE` appends `k<TAB>label` per point; `MALLORY_CRASH_AFTER=k` SIGKILLs
 * the fuzzer right after the k-th. Off (and free) when neither is set.
 */
const after = Number(process.env.MALLORY_CRASH_AFTER ?? 0);
const trace = process.env.MALLORY_CRASH_TRACE;
let count = 0;

export function crashPoint(label: string): void {
  if (after <= 0 && trace === undefined) return;
  count++;
  if (trace !== undefined) appendFileSync(trace, `${count}\t${label.replace(/\s+/g, ' ')}\n`);
  if (count === after) process.kill(process.pid, 'SIGKILL');
}
