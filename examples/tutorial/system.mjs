// The Mallory adapter for my-kv (server.mjs): what Mallory needs to start its nodes, talk to
// them and read their logs. docs/tutorial.md builds it step by step.
import { request } from 'node:http';
import process from 'node:process';
import { fileURLToPath, URL } from 'node:url';

import { matchLogRules } from 'mallory';

const SERVER = fileURLToPath(new URL('./server.mjs', import.meta.url));

/** One HTTP call that gives up after timeoutMs; never rejects. */
function call(address, method, key, body, timeoutMs) {
  return new Promise((resolve) => {
    const req = request({ ...address, method, path: `/kv/${encodeURIComponent(key)}`, timeout: timeoutMs });
    req.on('response', (res) => {
      let text = '';
      res.on('data', (chunk) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode, body: JSON.parse(text) }));
    });
    req.on('timeout', () => req.destroy(new Error(`no answer in ${timeoutMs} ms`)));
    req.on('error', (e) => resolve({ error: e.message, refused: e.code === 'ECONNREFUSED' }));
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

/** An update is `ok` when done, `fail` only when it surely did not happen, else `info`. */
function outcome(answer) {
  if (answer.status === 200) return { type: 'ok' };
  if (answer.status === 409 || answer.status === 503 || answer.refused) {
    return { type: 'fail', error: answer.error ?? answer.body.error };
  }
  return { type: 'info', error: answer.error ?? answer.body.error };
}

function client(address, timeoutMs) {
  return {
    async read(key) {
      const answer = await call(address, 'GET', key, undefined, timeoutMs);
      // A read changes nothing: whatever went wrong, it is a `fail`.
      if (answer.status !== 200) return { type: 'fail', error: answer.error ?? answer.body.error };
      return { type: 'ok', value: answer.body.value };
    },
    async write(key, value) {
      return outcome(await call(address, 'PUT', key, { value }, timeoutMs));
    },
    async cas(key, expected, value) {
      return outcome(await call(address, 'POST', key, { expected, value }, timeoutMs));
    },
  };
}

/** Log lines worth a name; `role` is the attribute the report's role lanes read. */
const LOG_RULES = [
  { re: /serving as primary/, type: 'serving', attrs: { role: 'leader' } },
  { re: /serving as follower/, type: 'serving', attrs: { role: 'follower' } },
  // The version is hex: capture it with its 0x, so it stays text (an all-digit capture is a number).
  { re: /stored key=(\S+) version=(0x[0-9a-f]+)/, type: 'stored', groups: ['key', 'version'] },
];

/** @type {import('mallory').SystemDefinition} */
export const system = {
  name: 'my-kv',
  defaultNodes: 3,
  bugs: ['forget-on-restart'],
  create: ({ bugs }) => ({
    name: 'my-kv',
    services: ['kv'],
    peerServices: ['kv'],
    crashPatterns: [],
    leadership: {
      leader: async (cluster) => {
        const answer = await call(cluster.clientAddress('n1', 'kv'), 'GET', 'status', undefined, 500);
        return answer.status === 200 ? 'n1' : undefined;
      },
    },
    doctor: async () => [{ ok: true, what: `my-kv server ${SERVER}` }],
    launch: (node, cluster) => {
      const listen = cluster.listen(node, 'kv');
      const primary = cluster.dial(node, 'n1', 'kv'); // through dial, so faults can cut this link
      return {
        command: process.execPath,
        args: [
          SERVER,
          '--id',
          node,
          '--listen',
          `${listen.host}:${listen.port}`,
          '--primary-addr',
          `${primary.host}:${primary.port}`,
          ...bugs.flatMap((b) => ['--bug', b]),
        ],
      };
    },
    ready: async (cluster) => {
      const reads = cluster.members.map((node) =>
        client(cluster.clientAddress(node, 'kv'), 1000).read('ready'),
      );
      return (await Promise.all(reads)).every((r) => r.type === 'ok');
    },
    client: (node, cluster, timeoutMs) => client(cluster.clientAddress(node, 'kv'), timeoutMs),
    parseLog: (line) => matchLogRules(LOG_RULES, line),
  }),
};
