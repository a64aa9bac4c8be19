import type { ClientRequest, MicroOp } from './messages.js';
import type { RaftNode, Reply } from './raft.js';
import type { HostPort, Net, NetServer, NodeEnv } from '../seams.js';
import { parseObject, readLines } from './wire.js';

/** The client service: line-delimited JSON requests and responses, matched by `id`. */
export function serveClients(listen: HostPort, raft: RaftNode, net: Net, env: NodeEnv): NetServer {
  const server = net.createServer((socket) => {
    socket.setNoDelay(true);
    socket.on('error', () => {
      // the client reconnects
    });
    readLines(socket, (line) => {
      const raw = parseObject(line);
      if (!raw || typeof raw.id !== 'number') return;
      const id = raw.id;
      const reply: Reply = (response) => {
        if (socket.writable) socket.write(JSON.stringify({ id, ...response }) + '\n');
      };
      handle(raw as unknown as ClientRequest, raft, env, reply);
    });
  });
  server.listen(listen.port, listen.host);
  return server;
}

function handle(request: ClientRequest, raft: RaftNode, env: NodeEnv, reply: Reply): void {
  const bad = (what: string): void => {
    reply({ ok: false, definite: true, error: `bad request: ${what}` });
  };
  switch (request.op) {
    case 'read':
      if (typeof request.key !== 'string') bad('key must be a string');
      else raft.read(request.key, reply);
      return;
    case 'write':
      if (typeof request.key !== 'string' || typeof request.value !== 'number') {
        bad('write needs a string key and a number value');
      } else raft.write(request.key, request.value, reply);
      return;
    case 'cas':
      if (
        typeof request.key !== 'string' ||
        typeof request.expected !== 'number' ||
        typeof request.value !== 'number'
      ) {
        bad('cas needs a string key and number expected and value');
      } else raft.cas(request.key, request.expected, request.value, reply);
      return;
    case 'add':
      if (typeof request.key !== 'string' || !Number.isSafeInteger(request.delta)) {
        bad('add needs a string key and an integer delta');
      } else raft.add(request.key, request.delta, reply);
      return;
    case 'txn': {
      const problem = txnProblem(request.ops) ?? guardProblem(request.guard);
      if (problem !== undefined) bad(problem);
      else raft.txn(request.ops, request.guard, reply);
      return;
    }
    case 'status':
      reply({ ok: true, status: raft.status(), wallMs: env.wallMs() });
      return;
    case 'add-member':
    case 'remove-member':
      if (typeof request.node !== 'string') bad('node must be a string');
      else raft.changeMembership(request.node, request.op === 'add-member', reply);
      return;
    default:
      bad('unknown op');
  }
}

/** What is wrong with a transaction's guard (absent: none), if anything. */
function guardProblem(guard: unknown): string | undefined {
  if (guard === undefined) return undefined;
  const shape = 'a txn guard is a list of [key, number|null]';
  if (!Array.isArray(guard)) return shape;
  for (const entry of guard as unknown[]) {
    if (!Array.isArray(entry) || entry.length !== 2 || typeof entry[0] !== 'string') return shape;
    const value: unknown = entry[1];
    if (value !== null && !Number.isSafeInteger(value)) return shape;
  }
  return undefined;
}

/** What is wrong with a transaction's micro-ops, if anything. */
function txnProblem(ops: unknown): string | undefined {
  const shape = 'txn needs ops: a non-empty list of ["append"|"w", key, number] or ["r", key, null]';
  if (!Array.isArray(ops) || ops.length === 0) return shape;
  for (const op of ops as unknown[]) {
    if (!Array.isArray(op) || op.length !== 3 || typeof op[1] !== 'string') return shape;
    const [f, , value] = op as unknown as MicroOp;
    const ok = f === 'r' ? value === null : (f === 'append' || f === 'w') && Number.isSafeInteger(value);
    if (!ok) return shape;
  }
  return undefined;
}
