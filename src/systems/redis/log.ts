import { type LogRule, matchLogRules } from '../log-rules.js';
import type { ParsedLogEvent } from '../system.js';

/** `pid:R dd Mon yyyy hh:mm:ss.mmm L message` — R is X sentinel, M primary, S replica, C child. */
const LINE = /^\d+:([XMSC]) \d+ \w+ \d+ [\d:.]+ [.*#-] (.*)$/;

const SENTINEL_EVENT = /^([+-][a-z-]+)(?: (master|slave|sentinel) )?(.*)$/;

const SERVER_RULES: readonly LogRule[] = [
  { re: /^MASTER MODE enabled/, type: 'promoted' },
  { re: /^REPLICAOF \S+ enabled|^Connecting to MASTER/, type: 'following-primary' },
  { re: /^MASTER <-> REPLICA sync started/, type: 'sync-started' },
  { re: /^Partial resynchronization not possible/, type: 'partial-resync-impossible' },
  { re: /^Full resync from master: \S+:(\d+)/, type: 'full-resync', groups: ['offset'] },
  { re: /^Successful partial resynchronization with master/, type: 'partial-resync' },
  { re: /^MASTER <-> REPLICA sync: Finished with success/, type: 'sync-finished' },
  { re: /^Replica \S+ asks for synchronization/, type: 'replica-sync-request' },
  { re: /^Synchronization with replica \S+ succeeded/, type: 'replica-synced' },
  {
    re: /^Partial resynchronization request from \S+ accepted.*offset (\d+)/,
    type: 'replica-partial-accepted',
    groups: ['offset'],
  },
  { re: /^Connection with replica \S+ lost/, type: 'replica-lost' },
  { re: /^Connection with master lost/, type: 'primary-lost' },
  {
    re: /^Setting secondary replication ID to \S+, valid up to offset: (\d+)/,
    type: 'replid-shift',
    groups: ['offset'],
  },
  { re: /^Discarding previously cached master state/, type: 'cached-primary-discarded' },
  {
    re: /^Error condition on socket for SYNC|^Timeout connecting to the MASTER|^Master did not respond/,
    type: 'sync-error',
  },
  { re: /^DB loaded from (append only file|disk)/, type: 'db-loaded' },
  { re: /^Ready to accept connections/, type: 'ready' },
  { re: /^Background (saving|append only file rewriting) started/, type: 'background-save' },
  { re: /^Received SIGTERM|^User requested shutdown/, type: 'shutdown' },
];

/** One redis-server / redis-sentinel log line → a known internal event. */
export function parseRedisLog(line: string): ParsedLogEvent | undefined {
  const m = LINE.exec(line);
  if (!m) return undefined;
  const [, role, message] = m;
  if (role === 'X') {
    const s = SENTINEL_EVENT.exec(message);
    if (!s) return undefined;
    const [, event, target, rest] = s;
    const type = `sentinel${event}${target ? `-${target}` : ''}`;
    const epoch = /^(\d+)$/.exec(rest.trim()) ?? / (\d+)$/.exec(rest);
    return event === '+new-epoch' ||
      event === '+vote-for-leader' ||
      event === '+elected-leader' ||
      event === '+config-update-from'
      ? epoch
        ? { type, attrs: { epoch: Number(epoch[1]) } }
        : { type }
      : { type };
  }
  const event = matchLogRules(SERVER_RULES, message);
  // The role a server starts in (`M` primary, `S` replica): a split brain begins so (`splitBrain`).
  return event?.type === 'ready'
    ? { ...event, attrs: { role: role === 'M' ? 'leader' : 'follower' } }
    : event;
}
