import { appendFileSync } from 'node:fs';

import { HarnessError } from './errors.js';

/**
 * A test mode for proving that a fuzzer killed at any moment leaves nothing `mallory cleanup`
 * cannot remove, and that an internal error at any moment still records the run's status. Every
 * external command and every resource the run records is a point: `MALLORY_CRASH_TRACE=FILE`
 * appends `k<TAB>label` per point; `MALLORY_CRASH_AFTER=k` SIGKILLs the fuzzer right after the
 * k-th, or with `MALLORY_CRASH_WITH=error` throws at the first point from the k-th on that may throw. Off (and free) when none is set.
 */
const after = Number(process.env.MALLORY_CRASH_AFTER ?? 0);
const trace = process.env.MALLORY_CRASH_TRACE;
const withError = process.env.MALLORY_CRASH_WITH === 'error';
let count = 0;
let thrown = false;

/** `canThrow: false` where the caller promises never to throw (error mode then passes the point by). */
export function crashPoint(label: string, canThrow = true): void {
  if (after <= 0 && trace === undefined) return;
  count++;
  const line = label.replace(/\s+/g, ' ');
  if (trace !== undefined) appendFileSync(trace, `${count}\t${line}\n`);
  if (withError) {
    // The first point at or after the k-th where an error can be thrown.
    if (count < after || thrown || !canThrow) return;
    thrown = true;
    throw new HarnessError(`crash point ${count}: ${line}`);
  }
  if (count !== after) return;
  process.kill(process.pid, 'SIGKILL');
}
