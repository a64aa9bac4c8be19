import type { Probe } from '../../../probe/index.js';
import type { NodeArgs } from './args.js';
import { RaftNode } from './raft.js';
import type { NetServer, NodeIo } from '../seams.js';
import { serveClients } from './server.js';
import { Storage } from './storage.js';
import { Transport } from './transport.js';

const HEARTBEAT_MS = 50;
const REQUEST_TIMEOUT_MS = 2000;
const LAZY_VOTE_DELAY_MS = 1500;
/** How long the `ack-before-fsync` bug leaves appended entries unfsynced. */
const DEFERRED_FSYNC_MS = 1000;
/** The log keeps this many snapshot intervals of entries behind each snapshot. */
const SNAPSHOT_TRAILING_FACTOR = 4;

/** A running node: its Raft state machine, its peer transport and its client service. */
export interface KvraftNode {
  readonly raft: RaftNode;
  readonly transport: Transport;
  readonly server: NetServer;
  /** Stops the timers, closes the sockets and the log file. */
  close(): void;
}

/**
 * Starts one kvraft node in the world `io` gives it (Node's in a real process, the simulator's in
 * a simulated one): storage in `args.dataDir`, peers over `io.net`, clients on `args.client`.
 */
export function startNode(args: NodeArgs, io: NodeIo, probe: Probe): KvraftNode {
  const { env } = io;
  const id = args.id;
  // Fail-stop: a node whose disk refuses a write or an fsync cannot tell what is durable (after a
  // failed fsync the kernel may have dropped the dirty pages), so it stops before it replies to
  // anyone, and a restart reads what the disk really holds.
  const onFailure = (what: string, error: Error): never => {
    probe.emit('storage-failed');
    probe.flush();
    env.stderr(`kvraft ${id}: stopping: the disk refused to ${what} (${error.message})`);
    return env.exit(1);
  };
  const storage = new Storage({ fs: io.fs, timers: env }, args.dataDir, {
    onFailure,
    ...(args.bugs.has('ack-before-fsync') ? { deferFsyncMs: DEFERRED_FSYNC_MS } : {}),
    ...(args.bugs.has('rename-without-dir-fsync') ? { skipDirFsync: true } : {}),
  });
  // The node only sends from timers and handlers, after `transport` exists.
  const raft: RaftNode = new RaftNode(
    {
      id: args.id,
      members: args.members,
      join: args.join,
      bugs: args.bugs,
      snapshotEvery: args.snapshotEvery,
      snapshotTrailing: SNAPSHOT_TRAILING_FACTOR * args.snapshotEvery,
      heartbeatMs: HEARTBEAT_MS,
      electionMinMs: args.electionMinMs,
      electionMaxMs: args.electionMaxMs,
      requestTimeoutMs: REQUEST_TIMEOUT_MS,
      lazyVoteDelayMs: LAZY_VOTE_DELAY_MS,
    },
    storage,
    probe,
    (to, message) => {
      transport.send(to, message);
    },
    env,
  );
  const transport = new Transport(
    args.id,
    args.peers,
    args.peer,
    probe,
    (message) => {
      raft.receive(message);
    },
    io.net,
    env,
  );
  const server = serveClients(args.client, raft, io.net, env);
  return {
    raft,
    transport,
    server,
    close() {
      raft.close();
      transport.close();
      server.close();
    },
  };
}
