import { createProbe } from '../../probe/index.js';
import { parseNodeArgs, USAGE, type NodeArgs } from './_internals/args.js';
import { RaftNode } from './_internals/raft.js';
import { serveClients } from './_internals/server.js';
import { Storage } from './_internals/storage.js';
import { Transport } from './_internals/transport.js';

/**
 * One kvraft node process: `node dist/systems/kvraft/node.js --id n1 --data DIR --client H:P
 * --peer H:P --peers n1=H:P,n2=H:P,... --members n1,n2,n3 [--join] [--bug NAME]...`
 */
const HEARTBEAT_MS = 50;
const REQUEST_TIMEOUT_MS = 2000;
const LAZY_VOTE_DELAY_MS = 1500;
/** How long the `ack-before-fsync` bug leaves appended entries unfsynced. */
const DEFERRED_FSYNC_MS = 1000;
/** The log keeps this many snapshot intervals of entries behind each snapshot. */
const SNAPSHOT_TRAILING_FACTOR = 4;

function main(): void {
  let args: NodeArgs;
  try {
    args = parseNodeArgs(process.argv.slice(2));
  } catch (error) {
    process.stderr.write(`kvraft: ${(error as Error).message}\n${USAGE}\n`);
    process.exit(2);
  }
  const probe = createProbe();
  const id = args.id;
  // Fail-stop: a node whose disk refuses a write or an fsync cannot tell what is durable (after a
  // failed fsync the kernel may have dropped the dirty pages), so it stops before it replies to
  // anyone, and a restart reads what the disk really holds.
  const onFailure = (what: string, error: Error): never => {
    probe.emit('storage-failed');
    probe.flush();
    process.stderr.write(`kvraft ${id}: stopping: the disk refused to ${what} (${error.message})\n`);
    process.exit(1);
  };
  const storage = new Storage(args.dataDir, {
    onFailure,
    ...(args.bugs.has('ack-before-fsync') ? { deferFsyncMs: DEFERRED_FSYNC_MS } : {}),
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
  );
  const transport = new Transport(args.id, args.peers, args.peer, probe, (message) => {
    raft.receive(message);
  });
  const server = serveClients(args.client, raft);
  const fatal = (what: string) => (error: Error) => {
    process.stderr.write(`kvraft ${args.id}: cannot listen for ${what}: ${error.message}\n`);
    process.exit(2);
  };
  server.on('error', fatal('clients'));
  transport.listening().catch(fatal('peers'));
  process.stdout.write(
    `kvraft ${args.id} started: client ${args.client.host}:${args.client.port} ` +
      `peer ${args.peer.host}:${args.peer.port} bugs [${[...args.bugs].join(',')}]\n`,
  );
  const stop = (signal: NodeJS.Signals): void => {
    // Nothing in the harness sends these (it kills with SIGKILL): say so, for whoever reads the log.
    process.stderr.write(`kvraft ${args.id}: received ${signal}, stopping\n`);
    raft.close();
    transport.close();
    server.close();
    probe.close();
    process.exit(0);
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

main();
