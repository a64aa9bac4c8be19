// tiny-kv: a toy replicated-by-forwarding key-value store, the system under test of the example
// adapter (system.ts). One node, the primary, holds the data and persists each write to
// state.json in its working directory before it answers; every other node forwards client
// requests to the primary. With --bug ack-before-persist the primary answers first and persists
// only every second: a killed primary forgets writes it acknowledged. With --bug follower-reads (or
// undeclared-follower-reads: the same server, an adapter that does not say so) a follower answers
// reads from its own copy, pulled from the primary every 300 ms and updated by the writes it
// forwards: reads may be stale, but never older than the reader's own last write through it.
// With --bug rollback-on-restart a restarted primary undoes the last 20 updates it acknowledged (a
// replica that restores an older snapshot and never replays its log): acknowledged writes are
// rolled back, whatever the moment of the kill.
// With --bug slow-restart a primary that restarts from its state file answers every request 150 ms
// late for its first 60 s (a cold cache): it serves, but slower than before the fault.
//
//   node server.mjs --id n2 --listen 127.0.0.1:4002 --primary n1 --primary-addr 127.0.0.1:4101
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createServer, request } from 'node:http';
import process from 'node:process';
import { setInterval, setTimeout } from 'node:timers';
import { URL } from 'node:url';

const FORWARD_TIMEOUT_MS = 500;
const LAZY_PERSIST_MS = 1000;
const PULL_MS = 300;
const COLD_DELAY_MS = 150;
const COLD_FOR_MS = 60_000;
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
const followerReads =
  process.argv.includes('follower-reads') || process.argv.includes('undeclared-follower-reads');
const isPrimary = id === primary;
const slowRestart = process.argv.includes('slow-restart');
const rollbackOnRestart = process.argv.includes('rollback-on-restart');
/** rollback-on-restart: how many of its last updates a restarted primary undoes. */
const ROLLBACK_UPDATES = 20;
const startedAt = Date.now();

function log(level, text) {
  process.stdout.write(`${new Date().toISOString()} ${id} ${level} ${text}\n`);
}

/** key → value; on the primary also key → version (a counter over every update, kept on disk). */
const data = new Map();
const versions = new Map();
let counter = 0;
const restarted = isPrimary && existsSync(STATE_FILE);
if (restarted) {
  try {
    const state = JSON.parse(readFileSync(STATE_FILE, 'utf8'));
    for (const [k, v] of Object.entries(state.data)) data.set(k, v);
    for (const [k, v] of Object.entries(state.versions)) versions.set(k, v);
    counter = state.counter;
    if (rollbackOnRestart) {
      for (const [k, value, version] of (state.undo ?? []).reverse()) {
        if (value === null) data.delete(k);
        else data.set(k, value);
        versions.set(k, version);
      }
      log('INFO', `rolled back ${(state.undo ?? []).length} acknowledged updates`);
    }
  } catch (e) {
    process.stderr.write(`tiny-kv: state file unreadable: ${e.message}\n`);
    process.exit(1);
  }
}

/** rollback-on-restart: the last updates, each as [key, value before, version before]. */
const undo = [];

function persist() {
  const state = { data: Object.fromEntries(data), versions: Object.fromEntries(versions), counter, undo };
  writeFileSync(`${STATE_FILE}.tmp`, JSON.stringify(state));
  renameSync(`${STATE_FILE}.tmp`, STATE_FILE);
}

/** A follower's copy (follower reads): key → { value, version }; a key only moves to a newer version. */
const copy = new Map();
function learn(key, value, version) {
  if ((copy.get(key)?.version ?? -1) < version) copy.set(key, { value, version });
}
if (!isPrimary && followerReads) {
  setInterval(() => {
    const req = request(
      { host: primaryHost, port: Number(primaryPort), method: 'GET', path: '/dump', timeout: PULL_MS },
      (answer) => {
        let out = '';
        answer.on('data', (chunk) => (out += chunk));
        answer.on('end', () => {
          try {
            const dump = JSON.parse(out);
            for (const [k, v] of Object.entries(dump.data)) learn(k, v, dump.versions[k] ?? 0);
          } catch {
            // A torn answer: the next pull brings it again.
          }
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', () => {});
    req.end();
  }, PULL_MS);
}
if (isPrimary && lazy) setInterval(persist, LAZY_PERSIST_MS);

function reply(res, status, body) {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

/** The primary's own handling: reads, writes and compare-and-set on the map. */
function apply(method, key, body, res) {
  if (method === 'GET') return reply(res, 200, { value: data.get(key) ?? null });
  if (method === 'PUT' || method === 'POST') {
    if (method === 'POST' && (data.get(key) ?? null) !== body.expected) {
      return reply(res, 409, { error: 'mismatch' });
    }
    if (rollbackOnRestart) {
      undo.push([key, data.get(key) ?? null, versions.get(key) ?? 0]);
      if (undo.length > ROLLBACK_UPDATES) undo.shift();
    }
    data.set(key, body.value);
    versions.set(key, ++counter);
    if (!lazy) persist();
    return reply(res, 200, { version: counter });
  }
  return reply(res, 405, { error: 'method' });
}

/**
 * A follower passes the request on: 503 when it surely did not reach the primary, 504 when unknown.
 * With follower reads, an update the primary took goes into the follower's copy before the answer.
 */
function forward(method, path, key, text, res) {
  const req = request(
    { host: primaryHost, port: Number(primaryPort), method, path, timeout: FORWARD_TIMEOUT_MS },
    (answer) => {
      let out = '';
      answer.on('data', (chunk) => (out += chunk));
      answer.on('end', () => {
        if (followerReads && answer.statusCode === 200 && method !== 'GET') {
          try {
            learn(key, JSON.parse(text).value, JSON.parse(out).version);
          } catch {
            // Not an update's answer.
          }
        }
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

/** How long this request waits before it is handled (slow-restart: a restarted primary, cold). */
function coldDelay() {
  return slowRestart && restarted && Date.now() - startedAt < COLD_FOR_MS ? COLD_DELAY_MS : 0;
}

createServer((req, res) => {
  let text = '';
  req.on('data', (chunk) => (text += chunk));
  req.on('end', () => setTimeout(() => handle(req, text, res), coldDelay()));
}).listen(Number(port), host, () => {
  log('INFO', `started as ${isPrimary ? 'primary' : 'follower'} with ${data.size} keys`);
});

function handle(req, text, res) {
  const url = new URL(req.url ?? '/', 'http://x');
  if (url.pathname === '/status') return reply(res, 200, { id, primary });
  if (url.pathname === '/dump' && isPrimary) {
    return reply(res, 200, { data: Object.fromEntries(data), versions: Object.fromEntries(versions) });
  }
  const key = decodeURIComponent(url.pathname.replace(/^\/kv\//, ''));
  if (!isPrimary && followerReads && req.method === 'GET') {
    return reply(res, 200, { value: copy.get(key)?.value ?? null });
  }
  if (!isPrimary) return forward(req.method, req.url, key, text, res);
  return apply(req.method, key, text === '' ? {} : JSON.parse(text), res);
}
