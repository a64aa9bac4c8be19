import type { ParsedLogEvent } from '../system.js';

type Attrs = Record<string, number | string>;

interface Rule {
  readonly re: RegExp;
  readonly type: string;
  /** Names for the regexp's numeric groups, in order. */
  readonly groups?: readonly string[];
  /** zap fields copied as numeric attributes. */
  readonly fields?: Readonly<Record<string, string>>;
}

/** etcd 3.4's raft and server messages worth an event (the `msg` field of its zap JSON lines). */
const RULES: readonly Rule[] = [
  { re: /became leader at term (\d+)/, type: 'became-leader', groups: ['term'] },
  { re: /became candidate at term (\d+)/, type: 'became-candidate', groups: ['term'] },
  { re: /became pre-candidate at term (\d+)/, type: 'became-pre-candidate', groups: ['term'] },
  { re: /became follower at term (\d+)/, type: 'became-follower', groups: ['term'] },
  { re: /is starting a new election at term (\d+)/, type: 'election-start', groups: ['term'] },
  { re: /elected leader \S+ at term (\d+)/, type: 'leader-elected', groups: ['term'] },
  { re: /lost leader \S+ at term (\d+)/, type: 'leader-lost', groups: ['term'] },
  { re: /received MsgVoteResp from \S+ at term (\d+)/, type: 'vote-granted', groups: ['term'] },
  { re: /received MsgVoteResp rejection from \S+ at term (\d+)/, type: 'vote-rejected', groups: ['term'] },
  {
    re: /\[logterm: (\d+), index: (\d+)\] sent MsgVote request/,
    type: 'vote-request',
    groups: ['logterm', 'index'],
  },
  {
    re: /\[logterm: (\d+), index: (\d+), vote: \S+\] cast MsgVote/,
    type: 'vote-cast',
    groups: ['logterm', 'index'],
  },
  {
    re: /\[logterm: (\d+), index: (\d+), vote: \S+\] rejected MsgVote/,
    type: 'vote-refused',
    groups: ['logterm', 'index'],
  },
  {
    re: /\[term: (\d+)\] received a \S+ message with higher term from \S+ \[term: (\d+)\]/,
    type: 'higher-term-seen',
    groups: ['term', 'peerTerm'],
  },
  {
    re: /\[term: (\d+)\] ignored a \S+ message with lower term/,
    type: 'lower-term-ignored',
    groups: ['term'],
  },
  { re: /switched to configuration/, type: 'config-switched' },
  { re: /^added member$/, type: 'member-added' },
  { re: /^removed member$/, type: 'member-removed' },
  { re: /has been permanently removed from the cluster/, type: 'member-self-removed' },
  {
    re: /^triggering snapshot$/,
    type: 'snapshot-trigger',
    fields: { 'local-member-applied-index': 'index' },
  },
  { re: /^saved snapshot$/, type: 'snapshot-saved', fields: { 'snapshot-index': 'index' } },
  { re: /^compacted Raft logs$/, type: 'log-compacted', fields: { 'compact-index': 'index' } },
  { re: /restoring snapshot|applied snapshot|applying snapshot/, type: 'snapshot-applied' },
  { re: /sent database snapshot|sending database snapshot/, type: 'snapshot-sent' },
  { re: /received and saved database snapshot/, type: 'snapshot-received' },
  { re: /restored last compact revision|finished scheduled compaction/, type: 'mvcc-compaction' },
  { re: /peer became active/, type: 'peer-active' },
  { re: /peer became inactive/, type: 'peer-inactive' },
  { re: /lost TCP streaming connection/, type: 'stream-lost' },
  { re: /established TCP streaming connection/, type: 'stream-established' },
  { re: /failed to send out heartbeat on time/, type: 'heartbeat-late' },
  { re: /apply request took too long/, type: 'apply-slow' },
  { re: /published local member to cluster/, type: 'member-published' },
  { re: /ready to serve client requests/, type: 'serving' },
  { re: /restarting local member|starting local member|starting an etcd server/, type: 'starting' },
  { re: /rejected stream from remote peer because it was removed/, type: 'removed-peer-rejected' },
  { re: /request cluster ID mismatch/, type: 'cluster-id-mismatch' },
];

interface ZapLine {
  level?: string;
  msg?: string;
  [field: string]: unknown;
}

/** One etcd zap JSON line → a known internal event (or undefined: template mining handles it). */
export function parseEtcdLog(line: string): ParsedLogEvent | undefined {
  if (!line.startsWith('{')) return undefined;
  let zap: ZapLine;
  try {
    zap = JSON.parse(line) as ZapLine;
  } catch {
    return undefined;
  }
  const msg = zap.msg ?? '';
  for (const rule of RULES) {
    const m = rule.re.exec(msg);
    if (!m) continue;
    const attrs: Attrs = {};
    rule.groups?.forEach((name, i) => (attrs[name] = Number(m[i + 1])));
    for (const [field, name] of Object.entries(rule.fields ?? {})) {
      const v = Number(zap[field]);
      if (Number.isFinite(v)) attrs[name] = v;
    }
    return Object.keys(attrs).length > 0 ? { type: rule.type, attrs } : { type: rule.type };
  }
  if (zap.level === 'panic' || zap.level === 'fatal') return { type: `log-${zap.level}` };
  return undefined;
}
