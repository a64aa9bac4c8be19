import { constants } from 'node:os';

import type { ProcessEnd, StartSpec } from '../runtime.js';
import { shellLine, shellQuote } from '../../../core/shell.js';

/**
 * The shell side of starting a node on a host the fuzzer reaches through a command channel (SSH,
 * `docker exec`): the node leads its own process group under `setsid -w sh -c …`, that shell
 * writes the group's pid and its leader's start time to a pid file, says them on stdout
 * (`pid P START`), waits for the node and says its exit status last (`exit N`). Signals and
 * cleanup act on the group only while its pid is still that process.
 */

const SIGNAL_EXIT_BASE = 128;

/** A signal's name from its number (`exit 137` of a shell is SIGKILL). */
export function signalName(n: number): NodeJS.Signals | null {
  const entry = Object.entries(constants.signals).find(([, v]) => v === n);
  return entry ? (entry[0] as NodeJS.Signals) : null;
}

/**
 * The shell text that signals the process group whose leader's pid and start time a pid file
 * holds, only while that pid is still that process (a reused pid is never signalled).
 */
export function killGroupScript(pidFile: string, signal = 'KILL'): string {
  const f = shellQuote(pidFile);
  return (
    `[ -r ${f} ] || exit 0; read pid start < ${f}; ` +
    `[ "$(cut -d' ' -f22 /proc/$pid/stat 2>/dev/null)" = "$start" ] || exit 0; ` +
    `kill -s ${signal} -- -$pid 2>/dev/null || true`
  );
}

/** Ends process group `pid` while its leader is still the process that started at `start`. */
export function killGroupByPidScript(pid: number, start: string): string {
  return (
    `[ "$(cut -d' ' -f22 /proc/${pid}/stat 2>/dev/null)" = ${shellQuote(start)} ] || exit 0; ` +
    `kill -s KILL -- -${pid} 2>/dev/null || true`
  );
}

/** The shell text that starts `spec` in its own process group, its pid recorded in `pidFile`. */
export function groupStartScript(spec: StartSpec, pidFile: string): string {
  const env = Object.entries(spec.env).map(([k, v]) => `${k}=${v}`);
  const node = `${shellLine(['env', ...env, ...spec.argv])} >>${shellQuote(spec.stdout)} 2>>${shellQuote(spec.stderr)} </dev/null`;
  const inner =
    `start=$(cut -d' ' -f22 /proc/$$/stat); echo "$$ $start" > ${shellQuote(pidFile)}; echo "pid $$ $start"; ` +
    `${node} & wait $!; echo "exit $?"`;
  return `cd ${shellQuote(spec.cwd)} && exec setsid -w sh -c ${shellQuote(inner)}`;
}

/** What the start script has said so far on its stdout. */
export class GroupStartReader {
  private out = '';
  /** The group's pid and its leader's start time, once said. */
  started: { readonly pid: number; readonly start: string } | undefined;
  /** How the node ended, once said. */
  end: ProcessEnd | undefined;

  /** Reads what came; only whole lines count (a chunk may end inside a number). */
  feed(chunk: Buffer | string): void {
    this.out += chunk.toString();
    if (this.started === undefined) {
      const m = /^pid (\d+) (\d+)\n/m.exec(this.out);
      if (m) this.started = { pid: Number(m[1]), start: m[2] };
    }
    if (this.end === undefined) {
      const m = /^exit (\d+)\n/m.exec(this.out);
      if (m) {
        const status = Number(m[1]);
        this.end =
          status > SIGNAL_EXIT_BASE
            ? { code: null, signal: signalName(status - SIGNAL_EXIT_BASE) }
            : { code: status, signal: null };
      }
    }
  }

  /** How the node ended: as said, else (no exit line) the wrapper shell was killed with its group. */
  ending(): ProcessEnd {
    return this.end ?? { code: null, signal: 'SIGKILL' };
  }
}
