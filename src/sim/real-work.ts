/**
 * Resource types that are not work the harness awaits: the driver's own turns, timers (a real timer
 * in a simulated run is a leak the tests count, not work to wait for), and the long-lived handles
 * of a terminal, a pipe, a signal handler or a server.
 */
const NOT_WORK = new Set([
  'Immediate',
  'Timeout',
  'TTYWrap',
  'PipeWrap',
  'SignalWrap',
  'TCPServerWrap',
  'TCPWrap',
  'FSEventWrap',
  'StatWatcher',
  'MessagePort',
]);

/** Requests: each is one operation under way, whoever began it (never part of a baseline). */
const REQUEST = /Req|^(?:WriteWrap|ShutdownWrap|ConnectWrap)$/;

/**
 * Whether the process awaits real work: a request under way (a file operation, a lookup), or a
 * handle it did not have when this was made (a child process, a thread) —
 * `process.getActiveResourcesInfo()`. A simulated run holds virtual time while it does, so the
 * harness's real work (a report, a store write, a checker's thread) takes no virtual time, however
 * long it takes on this machine.
 */
export function realWorkProbe(): () => boolean {
  const baseline = countByType();
  return () => {
    for (const [type, n] of countByType()) {
      if (NOT_WORK.has(type)) continue;
      if (REQUEST.test(type) || n > (baseline.get(type) ?? 0)) return true;
    }
    return false;
  };
}

function countByType(): Map<string, number> {
  const counts = new Map<string, number>();
  for (const type of process.getActiveResourcesInfo()) counts.set(type, (counts.get(type) ?? 0) + 1);
  return counts;
}
