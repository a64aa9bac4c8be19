// tiny-kv: a toy replicated-by-forwarding key-value store, the system under test of the example
// adapter (system.ts). One node, the primary, holds the data and persists each write to
// state.json in its working directory before it answers; every other node forwards client
// requests to the primary. With --bug ack-before-persist the primary answers first and persists
// only every second: a killed primary forgets writes it acknowledged.
//
//   node server.mjs --id n2 --listen 127.0.0.1:4002 --primary n1 --primary-addr 127.0.0.1:4101
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createServer, request } from 'node:http';
import process from 'node:process';
import { setInterval } from 'node:timers';
import { URL } from 'node:url';

const FORWARD_TIMEOUT_MS = 500;
const LAZY_PERSIST_MS = 1000;
const STATE_FILE = 'state.json';

function flag(name) {
  const i = process.argv.indexOf(`--${name}`);
  return i < 0 ? undefined : process.argv[i + 1];
}
const id = flag('id');
const [host, port] = (flag('listen') ?? '').split(':');
const primary = flag('primary');
const [primaryHost, primaryPort] = (flag('primary-addr') ?? '').split(':');
const lazy = process.argv.includes('ack-before-persist');
const isPrimary = id === primary;

function log(level, text) {
  process.stdout.write(`${new Date().toISOString()} ${id} ${level} ${text}\n`);
}

const data = new Map();
if (isPrimary && existsSync(STATE_FILE)) {
  try {
    for (const [k, v] of Object.entries(JSON.parse(readFileSync(STATE_FILE, 'utf8')))) data.set(k, v);
  } catch (e) {
    process.stderr.write(`tiny-kv: state file unreadable: ${e.message}\n`);
    process.exit(1);
  }
}

function persist() {
  writeFileSync(`${STATE_FILE}.tmp`, JSON.stringify(Object.fromEntries(data)));
  renameSync(`${STATE_FILE}.tmp`, STATE_FILE);
}
if (isPrimary && lazy) setInterval(persist, LAZY_PERSIST_MS);

function reply(res, status, body) {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

/** The primary's own handling: reads, writes and compare-and-set on the map. */
function apply(method, key, body, res) {
  if (method === 'GET') return reply(res, 200, { value: data.get(key) ?? null });
  if (method === 'PUT') {
    data.set(key, body.value);
    if (!lazy) persist();
    return reply(res, 200, {});
  }
  if (method === 'POST') {
    if ((data.get(key) ?? null) !== body.expected) return reply(res, 409, { error: 'mismatch' });
    data.set(key, body.value);
    if (!lazy) persist();
    return reply(res, 200, {});
  }
  return reply(res, 405, { error: 'method' });
}

/** A follower passes the request on: 503 when it surely did not reach the primary, 504 when unknown. */
function forward(method, path, text, res) {
  const req = request(
    { host: primaryHost, port: Number(primaryPort), method, path, timeout: FORWARD_TIMEOUT_MS },
    (answer) => {
      let out = '';
      answer.on('data', (chunk) => (out += chunk));
      answer.on('end', () => {
        res.writeHead(answer.statusCode ?? 502, { 'content-type': 'application/json' });
        res.end(out);
      });
    },
  );
  req.on('timeout', () => req.destroy(new Error('timeout')));
  req.on('error', (e) => {
    const refused = e.code === 'ECONNREFUSED';
    log('WARN', `forward to primary failed: ${refused ? 'refused' : 'no-answer'}`);
    if (!res.headersSent) reply(res, refused ? 503 : 504, { error: e.message });
  });
  req.end(text);
}

createServer((req, res) => {
  let text = '';
  req.on('data', (chunk) => (text += chunk));
  req.on('end', () => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname === '/status') return reply(res, 200, { id, primary });
    const key = decodeURIComponent(url.pathname.replace(/^\/kv\//, ''));
    if (!isPrimary) return forward(req.method, req.url, text, res);
    return apply(req.method, key, text === '' ? {} : JSON.parse(text), res);
  });
}).listen(Number(port), host, () => {
  log('INFO', `started as ${isPrimary ? 'primary' : 'follower'} with ${data.size} keys`);
});
