import type { EventAttrs } from '../../../core/event.js';
import type { Probe } from '../../../probe/index.js';
import type { KvraftBug } from '../bugs.js';
import type {
  AppendEntries,
  AppendEntriesReply,
  Command,
  Entry,
  Guard,
  InstallSnapshot,
  InstallSnapshotReply,
  MicroOp,
  MicroOpResult,
  NodeStatus,
  Outgoing,
  PeerMessage,
  RequestVote,
  RequestVoteReply,
  ResponseBody,
  Role,
  Snapshot,
  StoredValue,
} from './messages.js';
import { addToRegister, applyTxn, readRegister } from './state-machine.js';
import type { NodeEnv, Timer } from '../seams.js';
import type { Storage } from './storage.js';

export interface RaftOptions {
  readonly id: string;
  /** Initial voting configuration (used only on first start). */
  readonly members: readonly string[];
  readonly join: boolean;
  readonly bugs: ReadonlySet<KvraftBug>;
  readonly snapshotEvery: number;
  /** Entries kept in the log behind a snapshot, so slightly lagging followers get entries. */
  readonly snapshotTrailing: number;
  readonly heartbeatMs: number;
  readonly electionMinMs: number;
  readonly electionMaxMs: number;
  /** How long a client request waits for commit before its outcome is reported unknown. */
  readonly requestTimeoutMs: number;
  /** `lazy-vote`: how long after replying the vote is persisted. */
  readonly lazyVoteDelayMs: number;
}

export type Reply = (response: ResponseBody) => void;

interface Waiter {
  readonly term: number;
  readonly reply: Reply;
  readonly timer: Timer;
  /** `ack-before-commit`: acknowledged once persisted locally. */
  acked: boolean;
}

interface PendingRead {
  readonly key: string;
  readonly round: number;
  readIndex: number | undefined;
  readonly reply: Reply;
  readonly deadlineMs: number;
}

interface Config {
  /** The voters. */
  readonly members: readonly string[];
  /** Members that get entries but do not vote yet (added back, not caught up). */
  readonly learners: readonly string[];
  readonly index: number;
}

/**
 * Most entries sent in one AppendEntries: as many as the log keeps behind a snapshot, so a follower
 * that lags less than that catches up in one message, as etcd's 1 MB messages do.
 */
const MAX_BATCH = 256;
/** A lagging follower is sent the snapshot at most this often. */
const SNAPSHOT_RESEND_MS = 250;

const UNKNOWN = (error: string): ResponseBody => ({
  ok: false,
  definite: false,
  error,
});

/** Prints crash text the fuzzer's log check recognises, and exits non-zero like a failed assert. */
export function assertionFailed(message: string, probe: Probe, env: NodeEnv): never {
  probe.emit('assertion-failed');
  probe.flush();
  env.stderr(`ASSERTION FAILED: ${message}`);
  return env.exit(1);
}

/**
 * One Raft node: election, replication, commit, snapshots, single-server membership changes and
 * read-index reads, over a key-value state machine. Messages arrive through `receive`; outgoing ones
 * leave through `send`. Durable state goes through `storage` before any reply that depends on it.
 */
export class RaftNode {
  private term = 0;
  private votedFor: string | null = null;
  /** `lazy-vote`: the vote in memory is not yet on disk. */
  private voteDirty = false;
  private role: Role = 'follower';
  private leader: string | null = null;

  private snapshot: Snapshot;
  /** Entries after `logStart`; those up to the snapshot index are kept as a trailing window. */
  private log: Entry[] = [];
  private logStart = 0;
  private logStartTerm = 0;
  /** Entries appended by this leader that are not yet on disk. */
  private unpersisted: Entry[] = [];
  private persistScheduled = false;
  private commit: number;
  private applied: number;
  private kv: Map<string, StoredValue>;
  private config: Config;
  private configCommittedReported: number;

  private votes = new Set<string>();
  private voteReplies = new Set<string>();
  private readonly next = new Map<string, number>();
  private readonly match = new Map<string, number>();
  /** The last index carried by the latest append sent to each peer (what is in flight up to). */
  private readonly sentUpTo = new Map<string, number>();
  private readonly ackedRound = new Map<string, number>();
  /** `lease-read-on-receipt`: when each peer's latest acknowledgement was processed (wall ms). */
  private readonly ackedAt = new Map<string, number>();
  private readonly snapshotSentAt = new Map<string, number>();
  /** Peers that installed a snapshot from this leader: they know the configuration before entry 1. */
  private readonly hasBase = new Set<string>();
  private round = 0;

  private readonly waiters = new Map<number, Waiter>();
  private reads: PendingRead[] = [];

  private electionTimer: Timer | undefined;
  private readonly heartbeatTimer: Timer;
  private lazyVoteTimer: Timer | undefined;

  constructor(
    private readonly options: RaftOptions,
    private readonly storage: Storage,
    private readonly probe: Probe,
    private readonly send: (to: string, message: Outgoing) => void,
    private readonly env: NodeEnv,
  ) {
    const loaded = storage.load();
    this.term = loaded.meta.term;
    this.votedFor = loaded.meta.votedFor;
    const initial: Snapshot = {
      lastIndex: 0,
      lastTerm: 0,
      members: options.join ? [] : [...options.members],
      configIndex: 0,
      kv: [],
    };
    this.snapshot = loaded.snapshot ?? initial;
    if (!loaded.snapshot && loaded.entries.length === 0 && loaded.meta.term === 0) {
      storage.saveSnapshot(initial);
    }
    // The trailing entries behind the snapshot are not needed after a restart.
    this.resetLog(this.snapshot);
    this.log = loaded.entries.filter((e) => e.index > this.snapshot.lastIndex);
    this.commit = this.snapshot.lastIndex;
    this.applied = this.snapshot.lastIndex;
    this.kv = new Map(this.snapshot.kv);
    this.config = this.latestConfig(Infinity);
    this.configCommittedReported = this.config.index <= this.commit ? this.config.index : -1;
    if (loaded.cutBytes > 0) this.emit('log-torn-tail', { bytes: loaded.cutBytes });
    const inConfig = [...this.config.members, ...this.config.learners].includes(options.id);
    if (options.bugs.has('rejoined-restart-assert') && options.join && inConfig) {
      assertionFailed(
        `${options.id} restarted as a joiner onto a stored configuration that already includes it ` +
          `(index ${this.config.index}: members ${this.config.members.join(',')})`,
        probe,
        env,
      );
    }
    this.emit('node-start', {
      term: this.term,
      index: this.lastIndex(),
      commit: this.commit,
      members: this.config.members.join(','),
      learners: this.config.learners.join(','),
    });
    this.resetElectionTimer();
    this.heartbeatTimer = env.setInterval(() => {
      this.tick();
    }, options.heartbeatMs);
  }

  // ---- public surface -------------------------------------------------------------------------

  receive(message: PeerMessage): void {
    this.persistNow();
    switch (message.kind) {
      case 'request-vote':
        this.onRequestVote(message);
        break;
      case 'request-vote-reply':
        this.onRequestVoteReply(message);
        break;
      case 'append-entries':
        this.onAppendEntries(message);
        break;
      case 'append-entries-reply':
        this.onAppendEntriesReply(message);
        break;
      case 'install-snapshot':
        this.onInstallSnapshot(message);
        break;
      case 'install-snapshot-reply':
        this.onInstallSnapshotReply(message);
        break;
    }
  }

  status(): NodeStatus {
    return {
      id: this.options.id,
      role: this.role,
      term: this.term,
      leader: this.leader,
      commit: this.commit,
      applied: this.applied,
      lastIndex: this.lastIndex(),
      snapshotIndex: this.snapshot.lastIndex,
      members: [...this.config.members, ...this.config.learners],
      learners: this.config.learners,
      configIndex: this.config.index,
    };
  }

  write(key: string, value: number, reply: Reply): void {
    this.propose({ type: 'put', key, value }, reply);
  }

  cas(key: string, expected: number, value: number, reply: Reply): void {
    this.propose({ type: 'cas', key, expected, value }, reply);
  }

  /** An atomic add: one log entry, the count it reached in the reply. */
  add(key: string, delta: number, reply: Reply): void {
    this.propose({ type: 'add', key, delta }, reply);
  }

  /**
   * A transaction: one log entry, its micro-ops applied together when the entry is applied, if its
   * guard holds then.
   */
  txn(ops: readonly MicroOp[], guard: Guard | undefined, reply: Reply): void {
    if (this.options.bugs.has('split-txn') && ops.length > 1) {
      this.splitTxn(ops, [], guard, reply);
      return;
    }
    this.propose(guard === undefined ? { type: 'txn', ops } : { type: 'txn', ops, guard }, reply);
  }

  /**
   * split-txn: each micro-op is its own entry, proposed once the one before it has applied, so
   * other transactions' entries land in between (an interactive transaction without concurrency
   * control). Once a part has applied, any later refusal is an unknown outcome: the transaction
   * took effect in part, and a client told it failed (or sent to another leader) would retry it.
   * A guard goes with the first part only.
   */
  private splitTxn(
    rest: readonly MicroOp[],
    done: readonly MicroOpResult[],
    guard: Guard | undefined,
    reply: Reply,
  ): void {
    const [op, ...others] = rest;
    const part: Command =
      guard === undefined ? { type: 'txn', ops: [op] } : { type: 'txn', ops: [op], guard };
    this.propose(part, (response) => {
      if (!response.ok || !('txn' in response)) {
        const error = response.ok ? 'no result' : response.error;
        reply(done.length === 0 ? response : UNKNOWN(`transaction applied in part: ${error}`));
        return;
      }
      const results = [...done, ...response.txn];
      if (others.length === 0) reply({ ok: true, txn: results });
      else
        this.env.setImmediate(() => {
          this.splitTxn(others, results, undefined, reply);
        });
    });
  }

  read(key: string, reply: Reply): void {
    if (!this.refuseUnlessLeader(reply)) return;
    if (this.options.bugs.has('stale-read')) {
      reply(readRegister(this.kv, key));
      return;
    }
    if (this.options.bugs.has('lease-read-on-receipt') && this.leaseHeld()) {
      reply(readRegister(this.kv, key));
      return;
    }
    this.round++;
    this.reads.push({
      key,
      round: this.round,
      readIndex: undefined,
      reply,
      deadlineMs: this.env.wallMs() + this.options.requestTimeoutMs,
    });
    this.broadcastAppend();
    this.serveReads();
  }

  /**
   * lease-read-on-receipt: the leader holds a lease while a majority acknowledged it within the
   * shortest election timeout, timed from when it processed each acknowledgement. Correct leases
   * (Raft thesis §6.4.1) time it from when the acknowledged heartbeat was sent: an acknowledgement
   * that waited (the leader was paused, the reply was slow) no longer proves anything by the time it
   * is processed, as followers may have timed out and elected another leader meanwhile.
   */
  private leaseHeld(): boolean {
    if (this.termAt(this.commit) !== this.term) return false;
    const now = this.env.wallMs();
    const lease = this.options.electionMinMs;
    return this.quorum((n) => n === this.options.id || now - (this.ackedAt.get(n) ?? -Infinity) < lease);
  }

  changeMembership(node: string, add: boolean, reply: Reply): void {
    if (!this.refuseUnlessLeader(reply)) return;
    const { members, learners } = this.config;
    const done = add === (members.includes(node) || learners.includes(node));
    if (this.config.index > this.commit) {
      // A retry of a change that is appended but not committed is not done: the entry may still
      // be overwritten (an isolated leader's self-removal), and a caller that took it as done
      // could wipe a node the others still count as a voter.
      reply(
        done
          ? { ok: false, definite: false, error: 'the change is appended, not yet committed' }
          : { ok: false, definite: true, error: 'a configuration change is in progress' },
      );
      return;
    }
    if (done) {
      reply({ ok: true });
      return;
    }
    if (this.termAt(this.commit) !== this.term) {
      reply({ ok: false, definite: true, error: 'leader has not committed in its term yet' });
      return;
    }
    if (!add && members.length === 1 && members[0] === node) {
      reply({ ok: false, definite: true, error: 'cannot remove the only voter' });
      return;
    }
    // A node is added as a learner: it may have been wiped, and a wiped node does not vote (it
    // cannot tell a stale candidate from a current one), so it must not be needed for a quorum
    // before it has caught up. A node added back also needs the snapshot again before entries.
    if (add) this.hasBase.delete(node);
    this.propose(
      add
        ? { type: 'config', members, learners: [...learners, node].sort() }
        : {
            type: 'config',
            members: members.filter((m) => m !== node),
            learners: learners.filter((m) => m !== node),
          },
      reply,
    );
  }

  close(): void {
    this.persistNow();
    this.heartbeatTimer.cancel();
    this.electionTimer?.cancel();
    this.lazyVoteTimer?.cancel();
    this.storage.close();
  }

  // ---- log helpers ----------------------------------------------------------------------------

  private lastIndex(): number {
    return this.logStart + this.log.length;
  }

  private resetLog(snapshot: Snapshot): void {
    this.log = [];
    this.logStart = snapshot.lastIndex;
    this.logStartTerm = snapshot.lastTerm;
  }

  private lastTerm(): number {
    return this.termAt(this.lastIndex()) ?? 0;
  }

  private entryAt(index: number): Entry | undefined {
    return index > this.logStart ? this.log[index - this.logStart - 1] : undefined;
  }

  private termAt(index: number): number | undefined {
    if (index === this.logStart) return this.logStartTerm;
    if (index === this.snapshot.lastIndex) return this.snapshot.lastTerm;
    return this.entryAt(index)?.term;
  }

  /** The configuration in effect at `index`: the latest config entry at or before it. */
  private latestConfig(index: number): Config {
    for (let i = this.log.length - 1; i >= 0; i--) {
      const entry = this.log[i];
      if (entry.index <= index && entry.command.type === 'config') {
        return { members: entry.command.members, learners: entry.command.learners ?? [], index: entry.index };
      }
    }
    return {
      members: this.snapshot.members,
      learners: this.snapshot.learners ?? [],
      index: this.snapshot.configIndex,
    };
  }

  private isMember(node: string): boolean {
    return this.config.members.includes(node);
  }

  /**
   * Whether this node starts elections: a member of its latest configuration, or — while that
   * configuration, which removes it, is not committed — a member of the one before. Raft thesis
   * §4.2.2: it may still be needed to commit its own removal (it does not count its own vote).
   */
  private mayCampaign(): boolean {
    const id = this.options.id;
    if (this.isMember(id)) return true;
    return this.config.index > this.commit && this.latestConfig(this.config.index - 1).members.includes(id);
  }

  private quorum(has: (node: string) => boolean): boolean {
    const members = this.config.members;
    return members.filter(has).length * 2 > members.length;
  }

  /** The other members, learners included: whom a leader replicates to. */
  private others(): string[] {
    return [...this.config.members, ...this.config.learners].filter((m) => m !== this.options.id);
  }

  /** A learner that has caught up with the commit index becomes a voter (one change at a time). */
  private promoteIfCaughtUp(peer: string): void {
    const { members, learners } = this.config;
    if (this.role !== 'leader' || !learners.includes(peer)) return;
    if ((this.match.get(peer) ?? 0) < this.commit || this.config.index > this.commit) return;
    if (this.termAt(this.commit) !== this.term) return;
    this.propose(
      { type: 'config', members: [...members, peer].sort(), learners: learners.filter((m) => m !== peer) },
      () => undefined,
    );
  }

  // ---- persistence ----------------------------------------------------------------------------

  private persistMeta(): void {
    const votedFor = this.voteDirty ? null : this.votedFor;
    this.storage.saveMeta({ term: this.term, votedFor });
  }

  private setTerm(term: number): void {
    this.term = term;
    this.votedFor = null;
    this.voteDirty = false;
    this.persistMeta();
  }

  private schedulePersist(): void {
    if (this.persistScheduled) return;
    this.persistScheduled = true;
    this.env.setImmediate(() => {
      this.persistScheduled = false;
      this.persistNow();
      if (this.role === 'leader') {
        this.advanceCommit();
        this.broadcastAppend();
      }
    });
  }

  /** Writes this leader's newly appended entries to disk (one fsync for the batch). */
  private persistNow(): void {
    if (this.unpersisted.length === 0) return;
    const batch = this.unpersisted;
    this.unpersisted = [];
    this.storage.append(batch);
    if (!this.options.bugs.has('ack-before-commit')) return;
    for (const entry of batch) {
      const waiter = this.waiters.get(entry.index);
      if (waiter && entry.command.type === 'put' && !waiter.acked) {
        waiter.acked = true;
        waiter.reply({ ok: true });
      }
    }
  }

  private persistedIndex(): number {
    return this.lastIndex() - this.unpersisted.length;
  }

  // ---- roles ----------------------------------------------------------------------------------

  private emit(type: string, attrs: EventAttrs): void {
    this.probe.emit(type, attrs);
    const text = Object.entries(attrs)
      .map(([k, v]) => `${k}=${v}`)
      .join(' ');
    this.env.log(`${this.options.id} ${type} ${text}`);
  }

  private randomElectionMs(): number {
    const { electionMinMs, electionMaxMs } = this.options;
    return electionMinMs + this.env.random() * (electionMaxMs - electionMinMs);
  }

  private resetElectionTimer(): void {
    this.electionTimer?.cancel();
    this.electionTimer = this.env.setTimeout(() => {
      this.electionTimeout();
    }, this.randomElectionMs());
  }

  private electionTimeout(): void {
    this.resetElectionTimer();
    if (this.role === 'leader' || !this.mayCampaign()) return;
    // The new term and the vote for ourselves reach the disk in one write.
    this.term += 1;
    this.votedFor = this.options.id;
    this.voteDirty = false;
    this.persistMeta();
    this.role = 'candidate';
    this.leader = null;
    this.votes = new Set([this.options.id]);
    this.voteReplies = new Set([this.options.id]);
    this.emit('become-candidate', { term: this.term, index: this.lastIndex() });
    if (this.quorum((n) => this.votes.has(n))) {
      this.becomeLeader();
      return;
    }
    this.requestVotes();
  }

  private requestVotes(): void {
    for (const peer of this.others()) {
      if (this.voteReplies.has(peer)) continue;
      this.send(peer, {
        kind: 'request-vote',
        term: this.term,
        lastLogIndex: this.lastIndex(),
        lastLogTerm: this.lastTerm(),
      });
    }
  }

  private becomeFollower(
    term: number,
    leader: string | null,
    why: 'higher-term' | 'removed' = 'higher-term',
  ): void {
    const wasLeader = this.role === 'leader';
    const previous = this.role;
    if (term > this.term) this.setTerm(term);
    this.role = 'follower';
    this.leader = leader;
    if (wasLeader) {
      this.emit(`step-down-${why}`, { term: this.term, index: this.lastIndex(), commit: this.commit });
      // ack-overwritten-entry: the writes wait on past the step-down, for their indexes to apply.
      if (this.options.bugs.has('ack-overwritten-entry')) this.failReads('leadership lost');
      else this.failPending('leadership lost');
    }
    if (previous !== 'follower') this.emit('become-follower', { term: this.term });
    this.resetElectionTimer();
  }

  private becomeLeader(): void {
    this.role = 'leader';
    this.leader = this.options.id;
    this.next.clear();
    this.match.clear();
    this.sentUpTo.clear();
    this.ackedRound.clear();
    this.ackedAt.clear();
    this.snapshotSentAt.clear();
    this.hasBase.clear();
    for (const peer of this.others()) this.next.set(peer, this.lastIndex() + 1);
    this.emit('become-leader', { term: this.term, index: this.lastIndex(), commit: this.commit });
    this.appendLocal({ type: 'noop' });
  }

  private failPending(error: string): void {
    for (const [index, waiter] of this.waiters) {
      waiter.timer.cancel();
      if (!waiter.acked) waiter.reply(UNKNOWN(error));
      this.waiters.delete(index);
    }
    this.failReads(error);
  }

  private failReads(error: string): void {
    for (const read of this.reads) read.reply({ ok: false, definite: true, error });
    this.reads = [];
  }

  private refuseUnlessLeader(reply: Reply): boolean {
    if (this.role === 'leader') return true;
    reply({
      ok: false,
      definite: true,
      error: 'not leader',
      ...(this.leader !== null ? { leader: this.leader } : {}),
    });
    return false;
  }

  private tick(): void {
    if (this.role === 'leader') {
      this.broadcastAppend();
      this.serveReads();
    } else if (this.role === 'candidate') {
      this.requestVotes();
    }
  }

  // ---- leader: proposals and replication ------------------------------------------------------

  private propose(command: Command, reply: Reply): void {
    if (!this.refuseUnlessLeader(reply)) return;
    const entry = this.appendLocal(command);
    const timer = this.env.setTimeout(() => {
      const waiter = this.waiters.get(entry.index);
      if (!waiter) return;
      this.waiters.delete(entry.index);
      if (!waiter.acked) waiter.reply(UNKNOWN('timed out waiting for commit'));
    }, this.options.requestTimeoutMs);
    this.waiters.set(entry.index, { term: this.term, reply, timer, acked: false });
  }

  private appendLocal(command: Command): Entry {
    const entry: Entry = { index: this.lastIndex() + 1, term: this.term, command };
    this.log.push(entry);
    this.unpersisted.push(entry);
    if (command.type === 'config') this.adoptConfig(entry.index, command.members, command.learners ?? []);
    this.schedulePersist();
    return entry;
  }

  private adoptConfig(index: number, members: readonly string[], learners: readonly string[]): void {
    this.config = { members, learners, index };
    this.emit('config-appended', {
      term: this.term,
      index,
      members: members.join(','),
      learners: learners.join(','),
      size: members.length,
    });
  }

  private broadcastAppend(): void {
    if (this.role !== 'leader') return;
    for (const peer of this.others()) this.sendAppend(peer);
  }

  private sendAppend(peer: string): void {
    let next = this.next.get(peer);
    if (next === undefined) {
      next = this.lastIndex() + 1;
      this.next.set(peer, next);
    }
    // A follower with nothing (a wiped node that joined) also needs the configuration in effect
    // before the first entry, which no entry carries: it gets the snapshot, not entries from 1.
    if (next <= this.logStart || (next === 1 && !this.hasBase.has(peer))) {
      const now = this.env.wallMs();
      if (now - (this.snapshotSentAt.get(peer) ?? 0) < SNAPSHOT_RESEND_MS) return;
      this.snapshotSentAt.set(peer, now);
      this.send(peer, {
        kind: 'install-snapshot',
        term: this.term,
        snapshot: this.snapshot,
        round: this.round,
      });
      return;
    }
    const prevIndex = next - 1;
    const entries = this.log.slice(next - this.logStart - 1, next - this.logStart - 1 + MAX_BATCH);
    this.sentUpTo.set(peer, prevIndex + entries.length);
    this.send(peer, {
      kind: 'append-entries',
      term: this.term,
      prevIndex,
      prevTerm: this.termAt(prevIndex) ?? 0,
      entries,
      commit: this.commit,
      round: this.round,
    });
  }

  private onAppendEntriesReply(m: AppendEntriesReply): void {
    if (m.term > this.term) {
      this.becomeFollower(m.term, null);
      return;
    }
    if (this.role !== 'leader' || m.term !== this.term) return;
    this.ackedRound.set(m.from, Math.max(this.ackedRound.get(m.from) ?? 0, m.round));
    this.ackedAt.set(m.from, this.env.wallMs());
    if (m.success) {
      const match = Math.max(this.match.get(m.from) ?? 0, m.matchIndex);
      this.match.set(m.from, match);
      this.next.set(m.from, match + 1);
      this.advanceCommit();
      this.promoteIfCaughtUp(m.from);
      // The next batch goes at once only when this reply acknowledges everything sent: otherwise
      // an append in flight already carries it, and answering every reply with another append
      // would keep a chain going per write and heartbeat for as long as the follower lags.
      if (match < this.lastIndex() && match >= (this.sentUpTo.get(m.from) ?? 0)) this.sendAppend(m.from);
    } else {
      // The follower may have lost its log (wiped and re-added), so match can go down as well.
      if (m.blank === true) this.hasBase.delete(m.from);
      const next = Math.max(1, Math.min(m.conflictIndex, this.lastIndex() + 1));
      this.match.set(m.from, Math.min(this.match.get(m.from) ?? 0, next - 1));
      const before = this.next.get(m.from);
      this.next.set(m.from, next);
      if (next !== before) this.sendAppend(m.from);
    }
    this.serveReads();
  }

  private onInstallSnapshotReply(m: InstallSnapshotReply): void {
    if (m.term > this.term) {
      this.becomeFollower(m.term, null);
      return;
    }
    if (this.role !== 'leader' || m.term !== this.term) return;
    this.ackedRound.set(m.from, Math.max(this.ackedRound.get(m.from) ?? 0, m.round));
    this.ackedAt.set(m.from, this.env.wallMs());
    const match = Math.max(this.match.get(m.from) ?? 0, m.lastIndex);
    this.match.set(m.from, match);
    this.next.set(m.from, match + 1);
    this.snapshotSentAt.delete(m.from);
    this.hasBase.add(m.from);
    this.advanceCommit();
    this.promoteIfCaughtUp(m.from);
    if (match < this.lastIndex()) this.sendAppend(m.from);
    this.serveReads();
  }

  private advanceCommit(): void {
    if (this.role !== 'leader') return;
    const self = this.options.id;
    for (let n = this.persistedIndex(); n > this.commit; n--) {
      if (this.termAt(n) !== this.term) break;
      const replicated = (node: string): boolean => (node === self ? true : (this.match.get(node) ?? 0) >= n);
      if (this.quorum(replicated)) {
        this.setCommit(n);
        break;
      }
    }
  }

  private serveReads(): void {
    if (this.reads.length === 0 || this.role !== 'leader') return;
    const now = this.env.wallMs();
    const committedInTerm = this.termAt(this.commit) === this.term;
    const remaining: PendingRead[] = [];
    for (const read of this.reads) {
      if (now > read.deadlineMs) {
        read.reply({ ok: false, definite: true, error: 'timed out confirming leadership' });
        continue;
      }
      // read-index-before-term-commit: a new leader takes its commit index as the read index before
      // it has committed an entry of its term, when that index may still lag the old leader's.
      const indexKnown = committedInTerm || this.options.bugs.has('read-index-before-term-commit');
      if (read.readIndex === undefined && indexKnown) read.readIndex = this.commit;
      const confirmed = this.quorum(
        (n) => n === this.options.id || (this.ackedRound.get(n) ?? 0) >= read.round,
      );
      if (confirmed && read.readIndex !== undefined && this.applied >= read.readIndex) {
        read.reply(readRegister(this.kv, read.key));
      } else {
        remaining.push(read);
      }
    }
    this.reads = remaining;
  }

  // ---- commit and apply -----------------------------------------------------------------------

  private setCommit(commit: number): void {
    if (commit <= this.commit) return;
    this.commit = commit;
    this.emit('commit-advance', { term: this.term, commit, role: this.role });
    if (this.config.index <= commit && this.configCommittedReported !== this.config.index) {
      this.configCommittedReported = this.config.index;
      this.emit('config-committed', {
        term: this.term,
        index: this.config.index,
        members: this.config.members.join(','),
        learners: this.config.learners.join(','),
      });
    }
    this.applyCommitted();
    if (this.role === 'leader' && !this.isMember(this.options.id) && this.config.index <= commit) {
      this.becomeFollower(this.term, null, 'removed');
    }
  }

  private applyCommitted(): void {
    while (this.applied < this.commit) {
      const entry = this.entryAt(this.applied + 1);
      if (!entry) break;
      this.applied = entry.index;
      const result = this.applyCommand(entry.command);
      const waiter = this.waiters.get(entry.index);
      if (waiter) {
        waiter.timer.cancel();
        this.waiters.delete(entry.index);
        if (!waiter.acked) {
          // ack-overwritten-entry: whatever entry applied at the index answers the write waiting on it.
          const own = waiter.term === entry.term || this.options.bugs.has('ack-overwritten-entry');
          waiter.reply(own ? result : UNKNOWN('entry overwritten'));
        }
      }
    }
    this.serveReads();
    if (this.applied - this.snapshot.lastIndex >= this.options.snapshotEvery) this.takeSnapshot();
  }

  private applyCommand(command: Command): ResponseBody {
    switch (command.type) {
      case 'put':
        this.kv.set(command.key, command.value);
        return { ok: true };
      case 'cas':
        if (this.kv.get(command.key) !== command.expected) {
          return { ok: false, definite: true, error: 'cas mismatch' };
        }
        this.kv.set(command.key, command.value);
        return { ok: true };
      case 'add':
        return addToRegister(this.kv, command.key, command.delta);
      case 'txn':
        return applyTxn(this.kv, command.ops, command.guard);
      case 'noop':
      case 'config':
        return { ok: true };
    }
  }

  private takeSnapshot(): void {
    this.persistNow();
    const at = this.applied;
    // Correct: the configuration in effect at the snapshot's index, which is committed.
    // snapshot-uncommitted-config: the latest configuration, which may be uncommitted (the older,
    // committed one is dropped with the compacted entries).
    const config = this.options.bugs.has('snapshot-uncommitted-config') ? this.config : this.latestConfig(at);
    const snapshot: Snapshot = {
      lastIndex: at,
      lastTerm: this.termAt(at) ?? 0,
      members: config.members,
      learners: config.learners,
      configIndex: config.index,
      kv: [...this.kv],
    };
    this.storage.saveSnapshot(snapshot);
    this.snapshot = snapshot;
    const start = Math.max(this.logStart, at - this.options.snapshotTrailing);
    if (start > this.logStart) {
      this.logStartTerm = this.termAt(start) ?? 0;
      this.log = this.log.slice(start - this.logStart);
      this.logStart = start;
      this.storage.rewriteLog(this.log);
    }
    this.emit('snapshot-taken', {
      term: this.term,
      index: at,
      configIndex: config.index,
      commit: this.commit,
    });
  }

  // ---- follower side --------------------------------------------------------------------------

  private upToDate(lastLogTerm: number, lastLogIndex: number): boolean {
    const myTerm = this.lastTerm();
    return lastLogTerm > myTerm || (lastLogTerm === myTerm && lastLogIndex >= this.lastIndex());
  }

  private onRequestVote(m: RequestVote): void {
    // Votes are answered whoever asks: a node whose configuration is stale (it missed a member-add)
    // must still vote for a candidate of the newer configuration, or neither can ever win.
    if (m.term > this.term) this.becomeFollower(m.term, null);
    const logOk =
      this.options.bugs.has('vote-without-log-check') || this.upToDate(m.lastLogTerm, m.lastLogIndex);
    const free = this.votedFor === null || this.votedFor === m.from;
    // A node outside its own configuration does not vote, as it does not campaign: a wiped node
    // started to join, not yet added, would otherwise give a stale candidate (one that missed the
    // change) the majority of its old configuration, and it would overwrite committed entries.
    // A learner does vote: a candidate counts its vote only when the candidate's configuration, more
    // recent than the learner's, has promoted it, and refusing can leave that configuration without
    // a quorum — a learner killed before its promotion reached it did (found by a campaign; etcd's
    // raft had the same bug, etcd-io/etcd#10998).
    // A node whose own removal is not committed votes too, as it may campaign (`mayCampaign`): the
    // removal can still be rolled back, and the configuration that replaces it may need this vote.
    // Refusing deadlocked a cluster whose two sides had each appended a removal across a partition
    // (found by a simulated campaign: no leader for good once healed).
    const voter = this.mayCampaign() || this.config.learners.includes(this.options.id);
    const granted = m.term === this.term && free && logOk && voter;
    if (granted) {
      const first = this.votedFor === null;
      this.votedFor = m.from;
      if (first) this.persistVote();
      this.resetElectionTimer();
      this.emit('vote-granted', { term: this.term, candidate: m.from, index: this.lastIndex() });
    } else {
      const reason = m.term < this.term ? 'term' : !free ? 'voted' : !logOk ? 'log' : 'not-member';
      this.emit(`vote-denied-${reason}`, { term: this.term, candidate: m.from });
    }
    const reply: Omit<RequestVoteReply, 'from' | 'to' | 'msg'> = {
      kind: 'request-vote-reply',
      term: this.term,
      granted,
    };
    this.send(m.from, reply);
  }

  private persistVote(): void {
    if (!this.options.bugs.has('lazy-vote')) {
      this.persistMeta();
      return;
    }
    // lazy-vote: the reply goes out now; the vote reaches the disk only later.
    this.voteDirty = true;
    const term = this.term;
    this.lazyVoteTimer?.cancel();
    this.lazyVoteTimer = this.env.setTimeout(() => {
      if (this.term !== term || !this.voteDirty) return;
      this.voteDirty = false;
      this.persistMeta();
    }, this.options.lazyVoteDelayMs);
  }

  private onRequestVoteReply(m: RequestVoteReply): void {
    if (m.term > this.term) {
      this.becomeFollower(m.term, null);
      return;
    }
    // stale-vote-reply-counted: a grant from an earlier term of this candidate (a delayed reply)
    // counts in the current one.
    const stale = m.term < this.term && this.options.bugs.has('stale-vote-reply-counted');
    if (this.role !== 'candidate' || (m.term !== this.term && !stale)) return;
    this.voteReplies.add(m.from);
    if (!m.granted) return;
    this.votes.add(m.from);
    if (this.wonElection()) this.becomeLeader();
  }

  /**
   * Whether the votes make a majority of the voters. learner-vote-counted: every grant counts,
   * learners' too, against the number of voters.
   */
  private wonElection(): boolean {
    if (this.options.bugs.has('learner-vote-counted')) {
      return this.votes.size * 2 > this.config.members.length;
    }
    return this.quorum((n) => this.votes.has(n));
  }

  private acceptLeader(m: AppendEntries | InstallSnapshot): boolean {
    if (m.term < this.term) return false;
    if (m.term > this.term || this.role !== 'follower') this.becomeFollower(m.term, m.from);
    if (this.options.bugs.has('vote-reset-same-term') && this.leader !== m.from && this.votedFor !== null) {
      // vote-reset-same-term: learning the term's leader resets the vote as a new term would,
      // though the term is the same: the node may vote again in it.
      this.votedFor = null;
      this.persistMeta();
    }
    this.leader = m.from;
    this.resetElectionTimer();
    return true;
  }

  private onAppendEntries(m: AppendEntries): void {
    const blank = this.lastIndex() === 0 && this.snapshot.members.length === 0;
    const reject = (conflictIndex: number): void => {
      this.send(m.from, {
        kind: 'append-entries-reply',
        term: this.term,
        success: false,
        matchIndex: 0,
        conflictIndex,
        round: m.round,
        ...(blank ? { blank } : {}),
      });
    };
    if (!this.acceptLeader(m)) {
      this.emit('append-rejected-term', { term: this.term, leaderTerm: m.term });
      reject(0);
      return;
    }
    let prevIndex = m.prevIndex;
    let prevTerm = m.prevTerm;
    let entries = m.entries;
    if (prevIndex < this.logStart) {
      // Entries we compacted away are committed, hence identical: skip them.
      entries = entries.filter((e) => e.index > this.logStart);
      prevIndex = this.logStart;
      prevTerm = this.logStartTerm;
    }
    if (prevIndex > this.lastIndex() || (blank && entries.length > 0)) {
      // A blank node cannot take entries from 1: it lacks the configuration they start from.
      this.emit(blank && entries.length > 0 ? 'append-rejected-blank' : 'append-rejected-gap', {
        term: this.term,
        index: prevIndex,
        last: this.lastIndex(),
      });
      reject(this.lastIndex() + 1);
      return;
    }
    const localPrevTerm = this.termAt(prevIndex);
    if (localPrevTerm !== prevTerm) {
      let conflict = prevIndex;
      while (conflict - 1 > this.logStart && this.termAt(conflict - 1) === localPrevTerm) {
        conflict--;
      }
      this.emit('append-rejected-conflict', { term: this.term, index: prevIndex, last: this.lastIndex() });
      reject(conflict);
      return;
    }
    const fresh: Entry[] = [];
    for (const entry of entries) {
      if (fresh.length === 0) {
        const existing = this.termAt(entry.index);
        if (existing === entry.term) continue;
        if (existing !== undefined) this.truncateFrom(entry.index);
      }
      fresh.push(entry);
    }
    if (fresh.length > 0) {
      this.log.push(...fresh);
      this.storage.append(fresh);
      for (const entry of fresh) {
        if (entry.command.type === 'config') {
          this.adoptConfig(entry.index, entry.command.members, entry.command.learners ?? []);
        }
      }
    }
    const matchIndex = prevIndex + entries.length;
    if (entries.length > 0) {
      this.emit('append-accepted', { term: this.term, index: matchIndex, commit: this.commit });
    }
    if (m.commit > this.commit) this.setCommit(Math.min(m.commit, matchIndex));
    this.send(m.from, {
      kind: 'append-entries-reply',
      term: this.term,
      success: true,
      matchIndex,
      conflictIndex: 0,
      round: m.round,
    });
  }

  /** Removes entries from `index` on; rolls the configuration back if it came from them. */
  private truncateFrom(index: number): void {
    if (index <= this.commit) {
      assertionFailed(
        `truncating committed entry ${index} (commit ${this.commit}, term ${this.term})`,
        this.probe,
        this.env,
      );
    }
    this.log = this.log.slice(0, index - this.logStart - 1);
    this.storage.rewriteLog(this.log);
    this.emit('log-truncated', { term: this.term, index });
    if (this.config.index < index) return;
    const from = this.config.index;
    if (this.snapshot.configIndex >= index && !this.hasConfigEntryBefore(index)) {
      assertionFailed(
        `configuration rollback from index ${from}: no configuration before index ${index} ` +
          `(snapshot ${this.snapshot.lastIndex} holds the configuration of index ${this.snapshot.configIndex})`,
        this.probe,
        this.env,
      );
    }
    this.config = this.latestConfig(index - 1);
    this.emit('config-rolled-back', {
      term: this.term,
      index: from,
      to: this.config.index,
      members: this.config.members.join(','),
      learners: this.config.learners.join(','),
    });
  }

  private hasConfigEntryBefore(index: number): boolean {
    return this.log.some((e) => e.index < index && e.command.type === 'config');
  }

  private onInstallSnapshot(m: InstallSnapshot): void {
    if (!this.acceptLeader(m)) {
      this.emit('snapshot-rejected-term', { term: this.term, leaderTerm: m.term });
      this.send(m.from, {
        kind: 'install-snapshot-reply',
        term: this.term,
        lastIndex: 0,
        round: m.round,
      });
      return;
    }
    const s = m.snapshot;
    // A node that joined with nothing takes even the initial snapshot: it carries the configuration.
    const blank = this.lastIndex() === 0 && this.snapshot.members.length === 0;
    if (s.lastIndex > this.commit || blank) {
      const keep = this.termAt(s.lastIndex) === s.lastTerm;
      const previousConfig = this.config.index;
      const suffix = keep ? this.log.filter((e) => e.index > s.lastIndex) : [];
      this.resetLog(s);
      this.log = suffix;
      this.snapshot = s;
      this.storage.saveSnapshot(s);
      this.storage.rewriteLog(this.log);
      this.kv = new Map(s.kv);
      this.commit = s.lastIndex;
      this.applied = s.lastIndex;
      this.config = this.latestConfig(Infinity);
      if (this.config.index < previousConfig) {
        this.emit('config-rolled-back', {
          term: this.term,
          index: previousConfig,
          to: this.config.index,
          members: this.config.members.join(','),
          learners: this.config.learners.join(','),
        });
      }
      this.emit('snapshot-installed', {
        term: this.term,
        index: s.lastIndex,
        commit: this.commit,
        configIndex: s.configIndex,
      });
    } else {
      // Everything it holds is committed here already (a resend, or a snapshot that crossed an append).
      this.emit('snapshot-stale', { term: this.term, index: s.lastIndex, commit: this.commit });
    }
    this.send(m.from, {
      kind: 'install-snapshot-reply',
      term: this.term,
      lastIndex: Math.max(s.lastIndex, Math.min(this.commit, this.lastIndex())),
      round: m.round,
    });
  }
}
