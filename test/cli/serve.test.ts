import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { once } from 'node:events';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { REPO_ROOT } from '../check/data-dir.js';
import { writeRunReport } from '../../src/report/write-run-report.js';
import { CHROMIUM, CHROMIUM_TIMEOUT_MS, chromium } from '../_helpers/chromium.js';
import { fakeRun } from '../report/_helpers/fake-run.js';
import { mallory } from './_helpers/cli.js';

const MALLORY = path.join(REPO_ROOT, 'bin', 'mallory.js');

/** A `mallory serve` started by the test, with the address it printed on stdout. */
interface Served {
  readonly child: ChildProcess;
  readonly url: string;
  readonly stderr: () => string;
}

async function serve(...args: string[]): Promise<Served> {
  const child = spawn(process.execPath, [MALLORY, 'serve', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  const url = await new Promise<string>((done, fail) => {
    // Ready once it printed its address (stdout) and what it serves (stderr).
    const ready = (): void => {
      if (stdout.includes('\n') && stderr.includes('\n')) done(stdout.trim());
    };
    child.stdout.on('data', (b: Buffer) => {
      stdout += b.toString();
      ready();
    });
    child.stderr.on('data', (b: Buffer) => {
      stderr += b.toString();
      ready();
    });
    child.once('exit', (code) => {
      fail(new Error(`mallory serve exited ${code}: ${stderr}`));
    });
  });
  return { child, url, stderr: () => stderr };
}

/** One GET (or another method) with the path sent exactly as given: no client-side normalising of `..`. */
async function get(
  url: string,
  rawPath: string,
  options: { method?: string; host?: string } = {},
): Promise<{ status: number; body: string; location?: string }> {
  const { hostname, port } = new URL(url);
  return new Promise((done, fail) => {
    const req = request(
      {
        hostname,
        port,
        path: rawPath,
        method: options.method ?? 'GET',
        headers: options.host !== undefined ? { host: options.host } : {},
      },
      (res) => {
        let body = '';
        res.on('data', (b: Buffer) => (body += b.toString()));
        res.on('end', () => {
          done({
            status: res.statusCode ?? 0,
            body,
            ...(res.headers.location !== undefined ? { location: res.headers.location } : {}),
          });
        });
      },
    );
    req.on('error', fail);
    req.end();
  });
}

describe('mallory serve', () => {
  const run = fakeRun();
  const outside = path.join(run.store, '..', 'secret.txt');
  let served: Served;

  beforeAll(async () => {
    await writeRunReport(run.dir);
    writeFileSync(outside, 'not for the browser\n');
    // Links out of the store: a directory and a file.
    symlinkSync('/etc', path.join(run.store, 'kvraft', 'etc-link'));
    symlinkSync(outside, path.join(run.dir, 'secret-link.txt'));
    served = await serve('--store', run.store, '--port', '0');
  });
  afterAll(() => {
    served.child.kill('SIGKILL');
    rmSync(path.join(run.store, '..'), { recursive: true, force: true });
  });

  it('listens on loopback by default, and lists the runs with status, verdict, bugs and links', async () => {
    expect(served.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    expect(served.stderr()).toContain(`read-only at ${served.url}`);
    const index = await get(served.url, '/');
    expect(index.status).toBe(200);
    const rel = path.relative(run.store, run.dir);
    expect(index.body).toContain(`<a href="${rel}/">${rel}</a>`);
    expect(index.body).toContain(`<a href="${rel}/report.html">report</a>`);
    expect(index.body).toMatch(/<td class="verdict-(?:valid|invalid|unknown)">/);
    expect(index.body).toContain('1: linearizability/register');
  });

  it("serves a run's files and lists its directory (a directory without its slash is redirected to it)", async () => {
    const rel = path.relative(run.store, run.dir);
    expect(await get(served.url, `/${rel}`)).toMatchObject({ status: 301, location: `/${rel}/` });
    // A doubled slash is no address of another site (`//kvraft/` would be the host kvraft).
    expect(await get(served.url, '//kvraft')).toMatchObject({ status: 301, location: '/kvraft/' });
    const listing = await get(served.url, `/${rel}/`);
    expect(listing.status).toBe(200);
    expect(listing.body).toContain('<a href="report.html">report.html</a>');
    expect(listing.body).toContain('<a href="bugs/">bugs/</a>');
    const results = await get(served.url, `/${rel}/results.json`);
    expect(results.status).toBe(200);
    expect(JSON.parse(results.body)).toMatchObject({ schema: 'mallory/results' });
    // The store's own link to the newest run stays inside the store: followed.
    expect((await get(served.url, '/latest/results.json')).status).toBe(200);
  });

  it("lists a link out of the store by name only, not what it points at (a directory, a file's size)", async () => {
    const rel = path.relative(run.store, run.dir);
    const listing = await get(served.url, `/${rel}/`);
    expect(listing.body).toContain(
      '<tr><td><a href="secret-link.txt">secret-link.txt</a></td><td></td></tr>',
    );
    const kvraft = await get(served.url, '/kvraft/');
    expect(kvraft.body).toContain('<a href="etc-link">etc-link</a>');
  });

  it.each([
    ['/../secret.txt'],
    ['/kvraft/../../secret.txt'],
    ['/%2e%2e/secret.txt'],
    ['/kvraft%2F..%2F..%2Fsecret.txt'],
    ['/kvraft/%2e%2e%2f%2e%2e%2fsecret.txt'],
    ['/kvraft/..%5c..%5csecret.txt'],
    ['/kvraft/etc-link/passwd'],
    ['/kvraft/etc-link/'],
    ['/kvraft/fake/secret-link.txt'],
    ['/%00'],
    ['/%zz'],
  ])('never serves anything outside the store: %s', async (raw) => {
    const r = await get(served.url, raw);
    expect([400, 403, 404]).toContain(r.status);
    expect(r.body).not.toContain('not for the browser');
    expect(r.body).not.toContain('root:');
  });

  it('is read-only, and answers no other host name than loopback (a rebinding page)', async () => {
    expect((await get(served.url, '/', { method: 'POST' })).status).toBe(405);
    expect((await get(served.url, '/', { method: 'DELETE' })).status).toBe(405);
    expect((await get(served.url, '/', { host: 'attacker.example:80' })).status).toBe(403);
    expect((await get(served.url, '/', { host: 'localhost:9999' })).status).toBe(200);
  });

  it.skipIf(!existsSync(CHROMIUM))(
    "a browser loads the index and follows its link to the run's report",
    async () => {
      const index = await chromium(['--dump-dom', served.url]);
      const href = /<a href="([^"]+\/report\.html)">report<\/a>/.exec(index)?.[1];
      expect(href).toBeDefined();
      const report = await chromium(['--dump-dom', new URL(href!, served.url).href]);
      // The report's own script ran in the browser and counted its charts.
      expect(report).toMatch(/<body [^>]*data-fault-labels="\d+"/);
      expect(report).toContain('linearizability');
    },
    CHROMIUM_TIMEOUT_MS * 2,
  );

  it('ends on SIGTERM with exit 0', async () => {
    const other = await serve('--store', run.store, '--port', '0');
    other.child.kill('SIGTERM');
    const [code] = (await once(other.child, 'exit')) as [number | null];
    expect(code).toBe(0);
  });
});

describe('mallory serve: what cannot be served, in one line (exit 2)', () => {
  let busy: Server;
  let busyPort = 0;
  const dir = mkdtempSync(path.join(tmpdir(), 'mallory-serve-'));
  beforeAll(async () => {
    busy = createServer();
    busy.listen(0, '127.0.0.1');
    await once(busy, 'listening');
    busyPort = (busy.address() as { port: number }).port;
    mkdirSync(path.join(dir, 'store'));
    writeFileSync(path.join(dir, 'file'), '');
  });
  afterAll(() => {
    busy.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a port in use', async () => {
    const r = await mallory('serve', '--store', path.join(dir, 'store'), '--port', String(busyPort));
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      `mallory: serve: 127.0.0.1:${busyPort} is already in use: give another --port (--port 0 takes any free one)\n`,
    );
  });

  it('no store there, or not a directory', async () => {
    const none = await mallory('serve', '--store', path.join(dir, 'nowhere'), '--port', '0');
    expect(none.code).toBe(2);
    expect(none.stderr).toBe(
      `mallory: serve: no store at ${path.join(dir, 'nowhere')}: give --store DIR (where mallory run wrote its runs)\n`,
    );
    const file = await mallory('serve', '--store', path.join(dir, 'file'), '--port', '0');
    expect(file.code).toBe(2);
    expect(file.stderr).toMatch(/^mallory: serve: .* is not a directory: give --store DIR .*\n$/);
  });

  it('a port that is not one', async () => {
    for (const port of ['http', '70000', '-1']) {
      const r = await mallory('serve', '--store', path.join(dir, 'store'), '--port', port);
      expect(r.code).toBe(2);
      expect(r.stderr.split('\n')).toHaveLength(2);
      expect(r.stderr).toMatch(/^mallory: serve: --port /);
    }
  });

  it('a host that is not an address of this machine', async () => {
    const r = await mallory(
      'serve',
      '--store',
      path.join(dir, 'store'),
      '--host',
      '192.0.2.1',
      '--port',
      '0',
    );
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      'mallory: serve: cannot listen on 192.0.2.1: give --host an address of this machine\n',
    );
  });
});
