import { readdirSync, readFileSync } from 'node:fs';

/** The fields of a /proc stat line after the command name: state, ppid, pgrp, … */
function statFields(path: string): string[] | undefined {
  try {
    const stat = readFileSync(path, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined; // gone meanwhile
  }
}

/** States of a task that runs no more code of its own: stopped, traced, zombie, dead. */
const STILL = new Set(['T', 't', 'Z', 'X']);

/**
 * The tasks (threads) of processes in the groups `pgids` that have not stopped yet (`PID/TID
 * (state)`). A signal is only queued when `kill` returns: a task in the middle of a system call
 * (a write, an fsync) finishes it first and stops on its way back.
 */
export function unstoppedTasks(pgids: ReadonlySet<number>): string[] {
  const left: string[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const fields = statFields(`/proc/${entry}/stat`);
    if (fields === undefined || !pgids.has(Number(fields[2]))) continue;
    let tasks: string[];
    try {
      tasks = readdirSync(`/proc/${entry}/task`);
    } catch {
      continue;
    }
    for (const task of tasks) {
      const state = statFields(`/proc/${entry}/task/${task}/stat`)?.[0];
      if (state !== undefined && !STILL.has(state)) left.push(`${entry}/${task} (${state})`);
    }
  }
  return left;
}

const POLL_MS = 1;

/**
 * Waits until every task of the groups has stopped (after a SIGSTOP), for at most `timeoutMs`;
 * returns the tasks still running then (empty: all stopped). Synchronous, as the copy it guards is.
 */
export function waitGroupsStopped(pgids: ReadonlySet<number>, timeoutMs: number): string[] {
  const deadline = performance.now() + timeoutMs;
  const nap = new Int32Array(new SharedArrayBuffer(4));
  for (;;) {
    const left = unstoppedTasks(pgids);
    if (left.length === 0 || performance.now() >= deadline) return left;
    Atomics.wait(nap, 0, 0, POLL_MS);
  }
}

/**
 * The same wait as shell text for a host (`waitGroupsStopped` there): polls every 10 ms, for at
 * most `tries` polls, until no task of the groups is in a running state; exits 0 either way.
 */
export function waitGroupsStoppedScript(pgids: readonly number[], tries = 100): string {
  const groups = pgids.map((g) => String(Math.trunc(g))).join(' ');
  return (
    `i=0; while [ $i -lt ${tries} ]; do ` +
    `busy=$(cat /proc/[0-9]*/task/[0-9]*/stat 2>/dev/null | sed 's/.*) //' | ` +
    `awk -v g=' ${groups} ' 'index(g, " " $3 " ") && $1 !~ /^[TtZX]/' | head -n 1); ` +
    `[ -z "$busy" ] && break; i=$((i + 1)); sleep 0.01; done`
  );
}
