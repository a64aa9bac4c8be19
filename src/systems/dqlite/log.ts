import { type LogRule, matchLogRules } from '../log-rules.js';
import type { ParsedLogEvent } from '../system.js';

/** `LIBRAFT   <ns> src/file.c:LINE message` and `LIBDQLITE <ns> function:LINE message` (the traces). */
const TRACE = /^(LIBRAFT|LIBDQLITE)\s+\d+\s+(\S+):\d+\s+(.*)$/;
/** go-dqlite's own log: `2006/01/02 15:04:05 ADDR: LEVEL: message`. */
const APP = /^\d{4}\/\d\d\/\d\d [\d:]+ \S+: (DEBUG|INFO|WARN|ERROR): (.*)$/;

const RAFT_STATES: Readonly<Record<string, string>> = {
  '0': 'unavailable',
  '1': 'follower',
  '2': 'candidate',
  '3': 'leader',
};

/** raft 0.15 trace messages worth an event; per-write traffic (append, commit, apply) is left out. */
const RAFT_RULES: readonly LogRule[] = [
  { re: /^self elect and convert to leader/, type: 'self-elect' },
  { re: /^convert to candidate and start new election/, type: 'election-start' },
  { re: /^votes quorum reached -> pre-vote successful/, type: 'pre-vote-won' },
  { re: /^votes quorum reached -> convert to leader/, type: 'election-won' },
  { re: /^vote granted to/, type: 'vote-granted' },
  { re: /^vote was not granted/, type: 'vote-not-granted' },
  { re: /^local server has a leader -> reject/, type: 'vote-rejected-has-leader' },
  {
    re: /disrupt_leader:(\d+) last_log_index:(\d+) last_log_term:(\d+) pre_vote:(\d+) term:(\d+)/,
    type: 'vote-request',
    groups: ['disrupt', 'lastIndex', 'lastTerm', 'preVote', 'term'],
  },
  {
    re: /^remote term (\d+) is higher than (\d+) -> bump local term and step down/,
    type: 'step-down-higher-term',
    groups: ['term', 'previous'],
  },
  {
    re: /^remote term (\d+) is higher than (\d+) -> bump local term/,
    type: 'term-bump',
    groups: ['term', 'previous'],
  },
  {
    re: /^current_term:(\d+) voted_for:\d+ start_index:(\d+) n_entries:(\d+)/,
    type: 'raft-start',
    groups: ['term', 'startIndex', 'entries'],
  },
  { re: /^take snapshot at (\d+)/, type: 'snapshot-take', groups: ['index'] },
  { re: /^put snapshot at (\d+), keeping (\d+)/, type: 'snapshot-put', groups: ['index', 'trailing'] },
  { re: /^sending snapshot with last index (\d+)/, type: 'snapshot-send', groups: ['index'] },
  {
    re: /conf_index:(\d+) last_index:(\d+) last_term:(\d+) term:(\d+)/,
    type: 'snapshot-install',
    groups: ['confIndex', 'index', 'lastTerm', 'term'],
  },
  { re: /^restored snapshot with last index (\d+)/, type: 'snapshot-restored', groups: ['index'] },
  {
    re: /^restore snapshot with last index (\d+) and last term (\d+)/,
    type: 'snapshot-load',
    groups: ['index', 'term'],
  },
  { re: /^no entry at index (\d+) -> reject/, type: 'append-reject-missing', groups: ['index'] },
  { re: /^log mismatch -> send old entries/, type: 'log-mismatch' },
  { re: /since it has corrupted entries/, type: 'segment-truncated-corrupt' },
  { re: /truncat/i, type: 'log-truncate' },
  { re: /roll ?back/i, type: 'config-rollback' },
  { re: /^add server: id \d+/, type: 'config-add' },
  { re: /^remove server: id \d+/, type: 'config-remove' },
  { re: /^raft_assign to id:\d+ the role:(\d+)/, type: 'config-assign', groups: ['role'] },
  { re: /^uncommitted config change/, type: 'config-uncommitted' },
  { re: /^member \(index: \d+\) not yet caught up/, type: 'member-catching-up' },
  {
    re: /^member is_up_to_date:(\d+) is_fast_enough:(\d+)/,
    type: 'member-check',
    groups: ['upToDate', 'fastEnough'],
  },
  { re: /^queue full -> evict oldest message/, type: 'send-queue-evict' },
  { re: /^timer expired -> attempt to reconnect/, type: 'reconnect' },
  { re: /^local server is not leader -> ignore/, type: 'stale-result-ignored' },
];

const DQLITE_RULES: readonly LogRule[] = [
  { re: /^leader close/, type: 'dqlite-leader-close' },
  { re: /^connect failed to/, type: 'dqlite-connect-failed' },
  { re: /^handle remove/, type: 'dqlite-remove' },
  { re: /^handle add/, type: 'dqlite-add' },
  { re: /^handle assign/, type: 'dqlite-assign' },
  { re: /^fsm restore/, type: 'dqlite-fsm-restore' },
  { re: /^dqlite node start/, type: 'dqlite-start' },
  { re: /^issue checkpoint command/, type: 'dqlite-checkpoint' },
];

const APP_RULES: readonly LogRule[] = [
  { re: /no known leader/, type: 'app-no-leader' },
  { re: /connect to reported leader/, type: 'app-redirect' },
  { re: /network connection lost/, type: 'app-connection-lost' },
  { re: /connection refused/, type: 'app-connection-refused' },
];

/** One dqlite-demo output line (raft / dqlite traces, go-dqlite log) → a known internal event. */
export function parseDqliteLog(line: string): ParsedLogEvent | undefined {
  const trace = TRACE.exec(line);
  if (trace) {
    const [, lib, , message] = trace;
    if (lib === 'LIBDQLITE') return matchLogRules(DQLITE_RULES, message);
    const state = /^old_state:(\d+) new_state:(\d+)/.exec(message);
    if (state) {
      return {
        type: `became-${RAFT_STATES[state[2]] ?? `state${state[2]}`}`,
        attrs: { from: Number(state[1]), to: Number(state[2]) },
      };
    }
    return matchLogRules(RAFT_RULES, message);
  }
  const app = APP.exec(line);
  return app ? matchLogRules(APP_RULES, app[2]) : undefined;
}
