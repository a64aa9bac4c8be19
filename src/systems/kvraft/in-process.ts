/**
 * What a host of kvraft nodes inside one process needs (the simulator's world): a node started
 * from its arguments on the seams it is given, one request over a connection, the replies'
 * shapes, and the node's default timing. The real node's entry (`node.ts`) starts the same code.
 */
export {
  DEFAULT_ELECTION_MAX_MS,
  DEFAULT_ELECTION_MIN_MS,
  DEFAULT_SNAPSHOT_EVERY,
} from './_internals/args.js';
export { requestOnce } from './_internals/connection.js';
export type { ClientResponse, NodeStatus } from './_internals/messages.js';
export { type KvraftNode, startNode } from './_internals/start.js';
