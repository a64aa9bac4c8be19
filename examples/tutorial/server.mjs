// my-kv: the tutorial's system under test (docs/tutorial.md). Node n1 is the primary: it keeps
// every key in memory and in state.json, written before it answers. Every other node forwards
// client requests to the primary. With --bug forget-on-restart the primary never writes
// state.json, so a killed primary comes back empty: acknowledged writes are lost.
//
//   node server.mjs --id n2 --listen 127.0.0.1:4002 --primary-addr 127.0.0.1:4101
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createServer, request } from 'node:http';
import process from 'node:process';

const flag = (name) => process.argv[process.argv.indexOf(`--${name}`) + 1];
const id = flag('id');
const [host, port] = flag('listen').split(':');
const [primaryHost, primaryPort] = flag('primary-addr').split(':');
const isPrimary = id === 'n1';
const forget = process.argv.includes('forget-on-restart');

const log = (text) => process.stdout.write(`${new Date().toISOString()} ${id} INFO ${text}\n`);
const reply = (res, status, body) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
};

// The primary's data, and a version counter over every update (logged in hex, as zxids are).
const data = new Map();
let version = 0;
if (isPrimary && existsSync('state.json')) {
  const state = JSON.parse(readFileSync('state.json', 'utf8'));
  for (const [k, v] of Object.entries(state.data)) data.set(k, v);
  version = state.version;
}

function update(key, body, res) {
  if (body.expected !== undefined && (data.get(key) ?? null) !== body.expected) {
    return reply(res, 409, { error: 'cas mismatch' });
  }
  data.set(key, body.value);
  version += 1;
  if (!forget) {
    writeFileSync('state.json.tmp', JSON.stringify({ data: Object.fromEntries(data), version }));
    renameSync('state.json.tmp', 'state.json');
  }
  log(`stored key=${key} version=0x${version.toString(16)}`);
  return reply(res, 200, {});
}

// A follower passes the request on: 503 when it surely did not reach the primary, 504 when unknown.
function forward(req, text, res) {
  const out = request({
    host: primaryHost,
    port: primaryPort,
    method: req.method,
    path: req.url,
    timeout: 500,
  });
  out.on('response', (answer) => {
    let body = '';
    answer.on('data', (chunk) => (body += chunk));
    answer.on('end', () => {
      res.writeHead(answer.statusCode, { 'content-type': 'application/json' });
      res.end(body);
    });
  });
  out.on('timeout', () => out.destroy(new Error('no answer from the primary')));
  out.on('error', (e) => {
    if (!res.headersSent) reply(res, e.code === 'ECONNREFUSED' ? 503 : 504, { error: e.message });
  });
  out.end(text);
}

createServer((req, res) => {
  let text = '';
  req.on('data', (chunk) => (text += chunk));
  req.on('end', () => {
    if (!isPrimary) return forward(req, text, res);
    const key = decodeURIComponent(req.url.replace(/^\/kv\//, ''));
    if (req.method === 'GET') return reply(res, 200, { value: data.get(key) ?? null });
    return update(key, JSON.parse(text), res);
  });
}).listen(Number(port), host, () => log(`serving as ${isPrimary ? 'primary' : 'follower'}`));
