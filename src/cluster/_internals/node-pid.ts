import type { NodeRuntime } from '../runtime/runtime.js';

/** How long the node under a started group's leader is looked for (it is forked right after the leader says its pid). */
const NODE_PID_TRIES = 200;
const NODE_PID_POLL_S = '0.01';

/**
 * The shell text that prints the first child of process `pid` (the node its group's leader
 * started), waiting for it: from `/proc/<pid>/task/<pid>/children`, else (a kernel without it) from
 * the parent pid field of every `/proc/<p>/stat`.
 */
export function nodePidScript(pid: number): string {
  const children = `/proc/${pid}/task/${pid}/children`;
  const scan = childScanScript(pid);
  return (
    `i=0; while [ $i -lt ${NODE_PID_TRIES} ]; do c=; ` +
    `if [ -e ${children} ]; then read -r c 2>/dev/null < ${children}; else ${scan}; fi; set -- $c; ` +
    `[ -n "$1" ] && { echo "$1"; exit 0; }; [ -d /proc/${pid} ] || exit 1; ` +
    `sleep ${NODE_PID_POLL_S}; i=$((i+1)); done; exit 1`
  );
}

/** The shell text that sets `c` to a child of process `pid`, found by the parent pid field of every `/proc/<p>/stat`. */
export function childScanScript(pid: number): string {
  return (
    `for f in /proc/[0-9]*/stat; do l=; read -r l 2>/dev/null < "$f" || continue; ` +
    `set -- \${l##*) }; [ "$2" = ${pid} ] && { d=\${f%/stat}; c=\${d#/proc/}; break; }; done`
  );
}

/**
 * The pid of the command a runtime started as process `pid`: that process itself where the
 * runtime starts the command as its group's leader, else the first child of the leader (a shell);
 * undefined when the leader ended before it forked.
 */
export async function commandPidOn(runtime: NodeRuntime, pid: number): Promise<number | undefined> {
  if (runtime.capabilities.commandLeadsGroup) return pid;
  const found = await runtime.exec(['sh', '-c', nodePidScript(pid)]);
  const commandPid = Number(found.stdout.trim());
  return found.code === 0 && Number.isInteger(commandPid) && commandPid > 0 ? commandPid : undefined;
}
