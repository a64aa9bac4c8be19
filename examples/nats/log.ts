import { matchLogRules, type LogRule, type ParsedLogEvent } from '../../src/index.js';

/** `[pid] yyyy/mm/dd hh:mm:ss.micros [LVL] message`: the level and the message. */
const LINE = /^\[\d+\] \d{4}\/\d\d\/\d\d [\d:.]+ \[(INF|WRN|ERR|DBG|TRC|FTL|SYS)\] (.*)$/;

/**
 * What nats-server 2.9 says about routes, JetStream's meta group (which servers and streams
 * exist), and each stream's Raft group. Everything else is template-mined.
 */
const RULES: readonly LogRule[] = [
  { re: /^Self is new JetStream cluster metadata leader/, type: 'meta-leader-self' },
  { re: /^JetStream cluster new metadata leader: ([^/\s]+)/, type: 'meta-leader', groups: ['leader'] },
  { re: /^JetStream cluster no metadata leader/, type: 'meta-leader-none' },
  {
    re: /^JetStream cluster new stream leader for '[^']* > ([^']*)'/,
    type: 'stream-leader-self',
    groups: ['stream'],
  },
  { re: /^JetStream cluster new consumer leader/, type: 'consumer-leader-self' },
  { re: /stream '[^']* > ([^']*)' has NO quorum, stalled/, type: 'stream-no-quorum', groups: ['stream'] },
  {
    re: /^JetStream cluster stream '[^']* > ([^']*)' .*not current/,
    type: 'stream-not-current',
    groups: ['stream'],
  },
  { re: /^Catchup for stream '[^']* > ([^']*)' complete/, type: 'catchup-complete', groups: ['stream'] },
  { re: /^Catchup for stream '[^']* > ([^']*)'/, type: 'catchup', groups: ['stream'] },
  { re: /^JetStream cluster (?:stream|consumer) .*(?:reset|resetting)/i, type: 'raft-reset' },
  { re: /^RAFT \[[^\]]*\] (.*)$/, type: 'raft-warning' },
  { re: /^Healthcheck failed/, type: 'healthcheck-failed' },
  { re: /Route connection created/, type: 'route-connected' },
  { re: /Router connection closed: Duplicate Route/, type: 'route-duplicate' },
  {
    re: /Router connection closed: (Stale Connection|Read Error|Write Error|Slow Consumer.*|Client Closed)/,
    type: 'route-closed',
    groups: ['reason'],
  },
  { re: /Router connection closed: (.*)$/, type: 'route-closed', groups: ['reason'] },
  { re: /^Error trying to connect to route/, type: 'route-dial-failed' },
  { re: /Slow Consumer Detected/, type: 'slow-consumer' },
  { re: /^Waiting for routing to be established/, type: 'waiting-for-routes' },
  { re: /^Server is ready/, type: 'server-ready' },
  { re: /^Restored (\d+) messages for stream/, type: 'stream-restored', groups: ['messages'] },
  { re: /^Starting JetStream cluster/, type: 'jetstream-cluster-starting' },
  { re: /^Received signal|^Server Exiting|^Initiating Shutdown/, type: 'shutdown' },
];

/** One nats-server log line → a known internal event (the message part, without pid and time). */
export function parseNatsLog(line: string): ParsedLogEvent | undefined {
  const m = LINE.exec(line);
  return m ? matchLogRules(RULES, m[2]) : undefined;
}

/**
 * Text only a crash prints, beyond Mallory's generic patterns (Go's `panic:` and `fatal error:`):
 * a fatal log line (`[FTL]`, the server exits after it) and a goroutine dump.
 */
export const NATS_CRASH_PATTERNS: readonly RegExp[] = [/\[FTL\] /, /^goroutine \d+ \[running\]:/];
