import { createReadStream, type Stats } from 'node:fs';
import { readdir, realpath, stat } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join, resolve, sep } from 'node:path';

import { UsageError } from '../core/errors.js';
import { resolveStorePath } from './_internals/store-path.js';
import { escapeXml } from './plot.js';
import { storeIndexPage } from './store-index.js';

/** Jepsen's `serve` port. */
export const DEFAULT_SERVE_PORT = 8080;
/** Loopback only: results on a remote machine are reached through a tunnel (`ssh -L`). */
export const DEFAULT_SERVE_HOST = '127.0.0.1';
const HIGHEST_PORT = 65_535;

const TEXT = 'text/plain; charset=utf-8';
/** Content types by file extension; anything else is served as text (logs, histories, EDN). */
const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.db': 'application/vnd.sqlite3',
  '.gz': 'application/gzip',
  '.tar': 'application/x-tar',
};

/** Host names a loopback server answers to (a page elsewhere that rebinds its name to 127.0.0.1 does not). */
const LOOPBACK_NAMES = new Set(['localhost', '127.0.0.1', '[::1]']);

/** A running `mallory serve`. */
export interface StoreServer {
  /** Its address, e.g. `http://127.0.0.1:8080/`. */
  readonly url: string;
  /** Stops listening and ends the open connections. */
  close(): Promise<void>;
}

export interface StoreServerOptions {
  readonly host?: string;
  readonly port?: number;
}

function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\./.test(host);
}

function send(res: ServerResponse, status: number, body: string, type = TEXT): void {
  res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

/** What an entry of a store directory is, links followed only while they stay in the store. */
async function entryInfo(rootReal: string, path: string): Promise<Stats | undefined> {
  const real = await realpath(path).catch(() => undefined);
  if (real === undefined || (real !== rootReal && !real.startsWith(rootReal + sep))) return undefined;
  return stat(real).catch(() => undefined);
}

/**
 * A directory of the store, as a page of links (the store's root is its index of runs). A link out
 * of the store is listed by name only: what it points at (a directory, a file's size) is not said.
 */
async function directoryPage(rootReal: string, dir: string, segments: readonly string[]): Promise<string> {
  const entries = (await readdir(dir, { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name));
  const here = `/${segments.join('/')}`;
  const rows = await Promise.all(
    entries.map(async (e) => {
      const info = await entryInfo(rootReal, join(dir, e.name));
      const isDir = info?.isDirectory() === true;
      const href = encodeURIComponent(e.name) + (isDir ? '/' : '');
      const size = info?.isFile() === true ? `${info.size}` : '';
      return `<tr><td><a href="${escapeXml(href)}">${escapeXml(e.name)}${isDir ? '/' : ''}</a></td><td>${size}</td></tr>`;
    }),
  );
  return [
    '<!DOCTYPE html>',
    `<html lang="en"><head><meta charset="utf-8"><title>${escapeXml(here)}</title>`,
    '<style>body{font-family:sans-serif;margin:1.5em}td{padding:1px 8px}td:nth-child(2){text-align:right}</style>',
    `</head><body><h1>${escapeXml(here)}</h1><p><a href="../">..</a> · <a href="/">all runs</a></p>`,
    `<table>${rows.join('\n')}</table></body></html>`,
  ].join('\n');
}

async function answer(
  rootReal: string,
  allowHost: (host: string) => boolean,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.setHeader('allow', 'GET, HEAD');
    send(res, 405, 'mallory serve is read-only: only GET and HEAD\n');
    return;
  }
  const hostName = (req.headers.host ?? '').replace(/:\d+$/, '');
  if (!allowHost(hostName)) {
    send(res, 403, `mallory serve answers on loopback names only, not ${hostName}\n`);
    return;
  }
  const rawPath = (req.url ?? '/').split(/[?#]/)[0];
  const target = await resolveStorePath(rootReal, rawPath);
  if (target.kind === 'refused') {
    send(res, target.status, `${target.reason}\n`);
    return;
  }
  if (target.kind === 'dir') {
    if (!rawPath.endsWith('/')) {
      // Relative links (a report's to its bugs' pages) resolve against the directory. The location
      // is rebuilt from the segments: the raw path (`//host`) would be another site's address.
      const location = `/${target.segments.map(encodeURIComponent).join('/')}/`;
      res.writeHead(301, { location });
      res.end();
      return;
    }
    const page =
      target.segments.length === 0
        ? storeIndexPage(rootReal, { linkRunDirs: true }).page
        : await directoryPage(rootReal, target.path, target.segments);
    send(res, 200, page, CONTENT_TYPES['.html']);
    return;
  }
  res.writeHead(200, {
    'content-type': CONTENT_TYPES[extname(target.path)] ?? TEXT,
    'content-length': target.size,
    'x-content-type-options': 'nosniff',
  });
  if (req.method === 'HEAD') {
    res.end();
    return;
  }
  const stream = createReadStream(target.path);
  stream.on('error', () => res.destroy());
  stream.pipe(res);
}

/** Why a server could not listen, in one line saying what to do. */
function listenError(error: NodeJS.ErrnoException, host: string, port: number): Error {
  switch (error.code) {
    case 'EADDRINUSE':
      return new UsageError(
        'port-in-use',
        `serve: ${host}:${port} is already in use: give another --port (--port 0 takes any free one)`,
      );
    case 'EACCES':
      return new UsageError(
        'port-denied',
        `serve: not allowed to listen on port ${port}: give --port 1024 or above`,
      );
    case 'EADDRNOTAVAIL':
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return new UsageError(
        'bad-host',
        `serve: cannot listen on ${host}: give --host an address of this machine`,
      );
    default:
      return error;
  }
}

/**
 * Serves a store read-only over HTTP, as Jepsen's `lein run serve` does: `/` lists the runs
 * (newest first, with status, verdict, bugs and links to each report and directory); any path
 * below is a file or directory of the store. Nothing outside the store is reachable (see
 * `resolveStorePath`). Listens on loopback unless `host` says otherwise.
 */
export async function serveStore(storeDir: string, options: StoreServerOptions = {}): Promise<StoreServer> {
  const host = options.host ?? DEFAULT_SERVE_HOST;
  const port = options.port ?? DEFAULT_SERVE_PORT;
  if (!Number.isInteger(port) || port < 0 || port > HIGHEST_PORT)
    throw new UsageError(
      'bad-args',
      `serve: --port must be a whole number from 0 to ${HIGHEST_PORT}, got ${port}`,
    );
  const root = resolve(storeDir);
  const info = await stat(root).catch(() => undefined);
  if (info === undefined)
    throw new UsageError(
      'no-store',
      `serve: no store at ${root}: give --store DIR (where mallory run wrote its runs)`,
    );
  if (!info.isDirectory())
    throw new UsageError(
      'no-store',
      `serve: ${root} is not a directory: give --store DIR (where mallory run wrote its runs)`,
    );
  const rootReal = await realpath(root);
  const allowHost = isLoopback(host)
    ? (name: string) => LOOPBACK_NAMES.has(name) || name === host
    : () => true;
  const server: Server = createServer((req, res) => {
    answer(rootReal, allowHost, req, res).catch((error: unknown) => {
      if (res.headersSent) res.destroy();
      else send(res, 500, `mallory serve: ${error instanceof Error ? error.message : String(error)}\n`);
    });
  });
  await new Promise<void>((done, fail) => {
    server.once('error', (error: NodeJS.ErrnoException) => {
      fail(listenError(error, host, port));
    });
    server.listen(port, host, () => {
      done();
    });
  });
  const bound = server.address() as AddressInfo;
  const shownHost = bound.family === 'IPv6' ? `[${bound.address}]` : bound.address;
  return {
    url: `http://${shownHost}:${bound.port}/`,
    close: () =>
      new Promise<void>((done) => {
        server.close(() => {
          done();
        });
        server.closeAllConnections();
      }),
  };
}
