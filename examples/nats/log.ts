import { matchLogRules, type LogRule, type ParsedLogEvent } from '../../src/index.js';

/** `[pid] yyyy/mm/dd hh:mm:ss.micros [LVL] message`: the level and the message. */
const LINE = /^\[\d+\] \d{4}\/\d\d\/\d\d [\d:.]+ \[(INF|WRN|ERR|DBG|TRC|FTL|SYS)\] (.*)$/;

/**
 * What nats-server 2.9 says about routes, JetStream's meta group (which servers and streams
 * exist) and stream recovery. Everything else is template-mined.
 */
const SERVER_RULES: readonly LogRule[] = [
  { re: /^Self is new JetStream cluster metadata leader/, type: 'meta-leader-self' },
  { re: /^JetStream cluster new metadata leader: ([^/\s]+)/, type: 'meta-leader', groups: ['leader'] },
  { re: /^JetStream cluster no metadata leader/, type: 'meta-leader-none' },
  {
    re: /^JetStream cluster new stream leader for '[^']* > ([^']*)'/,
    type: 'stream-leader-self',
    groups: ['stream'],
  },
  { re: /^JetStream cluster new consumer leader/, type: 'consumer-leader-self' },
  {
    re: /^JetStream cluster stream '[^']* > ([^']*)' has NO quorum, stalled/,
    type: 'stream-no-quorum',
    groups: ['stream'],
  },
  { re: /^JetStream cluster bootstrapping/, type: 'jetstream-bootstrap' },
  { re: /^JetStream cluster recovering state/, type: 'jetstream-recovering' },
  { re: /^\s*Restored (\d+) messages for stream/, type: 'stream-restored', groups: ['messages'] },
  {
    re: /^Error applying entries to '[^']* > ([^']*)': (.*)$/,
    type: 'apply-error',
    groups: ['stream', 'error'],
  },
  { re: /^Apply stream entries for .* skipping message/, type: 'apply-skip' },
  {
    re: /^Catchup for stream '[^']* > ([^']*)' complete/,
    type: 'stream-catchup-complete',
    groups: ['stream'],
  },
  { re: /^Catchup for stream '[^']* > ([^']*)'/, type: 'stream-catchup', groups: ['stream'] },
  { re: /^Healthcheck failed/, type: 'healthcheck-failed' },
  { re: / - rid:\d+ - Route connection created/, type: 'route-connected' },
  { re: / - rid:\d+ - Router connection closed: Duplicate Route/, type: 'route-duplicate' },
  { re: / - rid:\d+ - Router connection closed: ([A-Za-z ]+)/, type: 'route-closed', groups: ['reason'] },
  { re: / - rid:\d+ - Error flushing/, type: 'route-flush-error' },
  {
    re: /^Error trying to connect to route .*: (connection refused|i\/o timeout)/,
    type: 'route-dial-failed',
    groups: ['reason'],
  },
  { re: /^Error trying to connect to route/, type: 'route-dial-failed' },
  { re: / - rid:\d+ - Slow Consumer Detected|Slow Consumer/, type: 'slow-consumer' },
  { re: /^Waiting for routing to be established/, type: 'waiting-for-routes' },
  { re: /^Server is ready/, type: 'server-ready' },
];

/** JetStream's Raft (debug level), one rule set for every group: `raft-<event>` with the group's kind. */
const RAFT_RULES: readonly LogRule[] = [
  { re: /^Switching to (candidate|leader|follower)/, type: 'raft-role', groups: ['role'] },
  {
    re: /^Sending out voteRequest \{term:(\d+) lastTerm:(\d+) lastIndex:(\d+)/,
    type: 'raft-vote-request',
    groups: ['term', 'lastTerm', 'lastIndex'],
  },
  { re: /^Received a voteRequest &\{term:(\d+)/, type: 'raft-vote-requested', groups: ['term'] },
  {
    re: /^Sending a voteResponse &\{term:(\d+) peer:\S+ granted:(true|false)\}/,
    type: 'raft-vote-given',
    groups: ['term', 'granted'],
  },
  {
    re: /^Received a voteResponse &\{term:(\d+) peer:\S+ granted:(true|false)\}/,
    type: 'raft-vote-received',
    groups: ['term', 'granted'],
  },
  {
    re: /^Stepping down from (\w+), detected higher term: (\d+) vs (\d+)/,
    type: 'raft-step-down',
    groups: ['from', 'term', 'ourTerm'],
  },
  { re: /^Stepping down/, type: 'raft-step-down' },
  { re: /^Received append entry in candidate state/, type: 'raft-candidate-to-follower' },
  { re: /^AppendEntry updating leader to/, type: 'raft-new-leader' },
  { re: /^AppendEntry ignoring old term/, type: 'raft-old-term' },
  {
    re: /^AppendEntry did not match (\d+) (\d+) with (\d+) (\d+)/,
    type: 'raft-mismatch',
    groups: ['term', 'index', 'ourTerm', 'ourIndex'],
  },
  { re: /^Truncating and repairing WAL|^Truncat/, type: 'raft-truncate' },
  { re: /^Installing snapshot of (\d+) bytes/, type: 'raft-snapshot-install', groups: ['bytes'] },
  { re: /^Running catchup for/, type: 'raft-catchup-leader' },
  { re: /^Being asked to catch up follower/, type: 'raft-catchup-asked' },
  { re: /^Finished catching up/, type: 'raft-caught-up' },
  { re: /^Expanding our clustersize: (\d+) -> (\d+)/, type: 'raft-cluster-size', groups: ['from', 'to'] },
  { re: /^Update peers from leader/, type: 'raft-peers-updated' },
  { re: /^Added peer/, type: 'raft-peer-added' },
  { re: /^Started$/, type: 'raft-started' },
  { re: /lost quorum|Lost quorum/i, type: 'raft-lost-quorum' },
];

/** `RAFT [<our peer id> - <group>] …`: `_meta_` is the meta group, `S-…` a stream's, `C-…` a consumer's. */
const RAFT_LINE = /^RAFT \[\S+ - (\S+)\] (.*)$/;

function raftGroupKind(group: string): string {
  if (group === '_meta_') return 'meta';
  return group.startsWith('S-') ? 'stream' : group.startsWith('C-') ? 'consumer' : 'other';
}

/** One nats-server log line → a known internal event (the message part, without pid and time). */
export function parseNatsLog(line: string): ParsedLogEvent | undefined {
  const m = LINE.exec(line);
  if (!m) return undefined;
  const message = m[2];
  const raft = RAFT_LINE.exec(message);
  if (!raft) return matchLogRules(SERVER_RULES, message);
  const event = matchLogRules(RAFT_RULES, raft[2]);
  return event && { type: event.type, attrs: { ...event.attrs, group: raftGroupKind(raft[1]) } };
}

/**
 * Text only a crash prints, beyond Mallory's generic patterns (Go's `panic:` and `fatal error:`):
 * a fatal log line (`[FTL]`, the server exits after it) and a goroutine dump.
 */
export const NATS_CRASH_PATTERNS: readonly RegExp[] = [/\[FTL\] /, /^goroutine \d+ \[running\]:/];
