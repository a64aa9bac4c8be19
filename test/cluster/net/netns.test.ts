import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { Event } from '../../../src/core/event.js';
import { NetnsBackend } from '../../../src/cluster/net/netns.js';
import { processStartTime, ResourceRegistry } from '../../../src/cluster/resources.js';
import { PacketCapture } from '../../../src/observe/capture.js';

const isRoot = process.getuid?.() === 0;
const hasIp = spawnSync('ip', ['-V']).status === 0;
const hasTcpdump = spawnSync('tcpdump', ['--version']).status === 0;
const skip = !isRoot || !hasIp || !hasTcpdump;
const reason = !isRoot ? 'not root' : !hasIp ? 'no `ip` (apt-get install -y iproute2)' : 'no tcpdump';

const PORT = 7000;
const NODES = ['n1', 'n2', 'n3'];

const ECHO_SERVER = `
const net = require('node:net');
net.createServer((s) => { s.on('data', (d) => s.write(d)); s.on('error', () => {}); })
  .listen(Number(process.argv[2]), process.argv[1], () => process.stdout.write('ready\\n'));
`;

/** Exits 0 after one echo round trip and prints the elapsed ms; exits 3 on timeout. */
const PING_CLIENT = `
const net = require('node:net');
const t0 = Date.now();
const s = net.connect(Number(process.argv[2]), process.argv[1], () => s.write('ping'));
s.on('data', () => { process.stdout.write(String(Date.now() - t0)); process.exit(0); });
s.on('error', () => process.exit(2));
setTimeout(() => process.exit(3), Number(process.argv[3]));
`;

/** This process's children running `iptables-restore` (the backend's rule loaders). */
function loaderPids(): string[] {
  return readdirSync('/proc')
    .filter((e) => /^\d+$/.test(e))
    .filter((pid) => {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        const ppid = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1];
        const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
        return ppid === String(process.pid) && cmd.startsWith('iptables-restore');
      } catch {
        return false;
      }
    });
}

/** Root namespace iptables rules: the backend never touches them. */
function rootRules(): string {
  return execFileSync('iptables-save')
    .toString()
    .split('\n')
    .filter((l) => !l.startsWith('#'))
    .map((l) => l.replace(/\[\d+:\d+\]/, ''))
    .join('\n');
}

describe.skipIf(skip)(`NetnsBackend (real namespaces)${skip ? `: skipped, ${reason}` : ''}`, () => {
  let stateDir: string;
  let registry: ResourceRegistry;
  let net: NetnsBackend;
  let capture: PacketCapture | undefined;
  let rulesBefore: string;
  const events: Event[] = [];
  let serverPid: number | undefined;

  function ping(from: string, to: string, timeoutMs = 1500): { code: number | null; ms: number } {
    const target = net.dial(from, to, 'peer');
    const result = spawnSync(
      'ip',
      [
        ...net.commandPrefix(from).slice(1),
        process.execPath,
        '-e',
        PING_CLIENT,
        target.host,
        String(target.port),
        String(timeoutMs),
      ],
      { timeout: timeoutMs + 5000 },
    );
    return { code: result.status, ms: Number(result.stdout.toString()) };
  }

  function pingFromRoot(node: string, timeoutMs = 1500): Promise<boolean> {
    const address = net.clientAddress(node, 'peer');
    return new Promise((resolve) => {
      const socket = connect(address.port, address.host, () => socket.write('ping'));
      const timer = setTimeout(() => {
        socket.destroy();
        resolve(false);
      }, timeoutMs);
      socket.on('data', () => {
        clearTimeout(timer);
        socket.destroy();
        resolve(true);
      });
      socket.on('error', () => {
        clearTimeout(timer);
        resolve(false);
      });
    });
  }

  beforeAll(async () => {
    stateDir = mkdtempSync(join(tmpdir(), 'mallory-test-state-'));
    process.env.MALLORY_STATE_DIR = stateDir;
    rulesBefore = rootRules();
    registry = new ResourceRegistry(`netns-test-${process.pid}`, stateDir);
    net = await NetnsBackend.create({
      runId: `netns-test-${process.pid}-${Date.now()}`,
      nodes: NODES,
      services: { peer: PORT },
      registry,
    });
    capture = await PacketCapture.start(net.captureTap(), registry, (e) => events.push(e));
    const address = net.listen('n2', 'peer');
    const server = spawn(
      net.commandPrefix('n2')[0],
      [
        ...net.commandPrefix('n2').slice(1),
        process.execPath,
        '-e',
        ECHO_SERVER,
        address.host,
        String(address.port),
      ],
      { detached: true, stdio: ['ignore', 'pipe', 'ignore'] },
    );
    serverPid = server.pid;
    registry.record({
      kind: 'process',
      pid: server.pid!,
      startTime: processStartTime(server.pid!)!,
      label: 'echo',
    });
    await new Promise<void>((resolve) =>
      server.stdout.once('data', () => {
        resolve();
      }),
    );
  });

  afterAll(async () => {
    if (serverPid !== undefined) {
      try {
        process.kill(-serverPid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    await capture?.close();
    await net?.close();
    registry?.releaseAll();
    delete process.env.MALLORY_STATE_DIR;
    rmSync(stateDir, { recursive: true, force: true });
  });

  it('gives each node its own address in a private /24 and connects nodes and the fuzzer', async () => {
    const routes = execFileSync('ip', ['-4', 'route', 'show', 'table', 'all']).toString();
    expect(routes).toContain(`unreachable ${net.subnet} metric 4242`);
    expect(routes).toMatch(new RegExp(`^${net.subnet.replace(/\./g, '\\.')} dev ${net.rootVeth} `, 'm'));
    expect(net.subnet).toMatch(/^10\.\d+\.\d+\.0\/24$/);
    expect(net.listen('n1', 'peer').host).not.toBe(net.listen('n2', 'peer').host);
    expect(ping('n1', 'n2').code).toBe(0);
    expect(await pingFromRoot('n2')).toBe(true);
    const listed = execFileSync('ip', ['netns', 'list']).toString();
    expect(listed).toContain(net.hubNamespace);
  });

  it('its capture tap shows node-to-node segments, as send/recv events sharing a msg id', async () => {
    events.length = 0;
    expect(ping('n1', 'n2').code).toBe(0);
    await new Promise((r) => setTimeout(r, 500));
    const sends = events.filter((e) => e.type === 'send' && e.node === 'n1' && e.attrs?.peer === 'n2');
    expect(sends.length).toBeGreaterThan(0);
    const recv = events.find(
      (e) => e.type === 'recv' && e.node === 'n2' && e.attrs?.msg === sends[0].attrs?.msg,
    );
    expect(recv).toBeDefined();
    expect(recv!.attrs?.bytes).toBe(4);
    expect(recv!.ts).toBeGreaterThan(sends[0].ts);
    // client traffic from the root namespace is not a node-to-node event
    expect(events.every((e) => NODES.includes(String(e.attrs?.peer)))).toBe(true);
  });

  it('cuts a directed link while client traffic stays up, and heals it', async () => {
    await net.cut([['n1', 'n2']]);
    expect(ping('n1', 'n2', 800).code).toBe(3);
    expect(await pingFromRoot('n2')).toBe(true);
    await net.heal();
    expect(ping('n1', 'n2').code).toBe(0);
  });

  it('a cut is in the namespace rules as soon as it resolves, change after change (one long-lived loader per namespace)', async () => {
    const saved = (node: string): string =>
      execFileSync('ip', ['netns', 'exec', net.namespace(node), 'iptables-save', '-t', 'filter']).toString();
    const cutFrom = new RegExp(
      `^-A INPUT -s ${net.listen('n1', 'peer').host.replace(/\./g, '\\.')}/32 .*-j DROP`,
      'm',
    );
    for (let i = 0; i < 5; i++) {
      await net.cut([['n1', 'n2']]);
      expect(saved('n2')).toMatch(cutFrom);
      await net.cut([['n1', 'n3']]);
      expect(saved('n2')).not.toMatch(cutFrom);
      expect(saved('n3')).toMatch(cutFrom);
      await net.heal();
      expect(saved('n3')).not.toMatch(cutFrom);
    }
    expect(loaderPids().length).toBeGreaterThan(0);
  });

  it('drops and duplicates packets with iptables statistic rules, and heal removes them', async () => {
    await net.degrade([['n1', 'n2']], { target: 'one', lossPct: 100 });
    const rules = execFileSync('ip', ['netns', 'exec', net.namespace('n2'), 'iptables-save']).toString();
    expect(rules).toMatch(/-m statistic --mode random --probability 1(\.0+)? -j DROP/);
    expect(ping('n1', 'n2', 800).code).toBe(3);
    await net.degrade([['n1', 'n2']], { target: 'one', lossPct: 0, dupPct: 50 });
    const dup = execFileSync('ip', ['netns', 'exec', net.namespace('n1'), 'iptables-save']).toString();
    expect(dup).toMatch(/-m statistic --mode random --probability 0\.5(0*) -j TEE --gateway /);
    expect(ping('n1', 'n2').code).toBe(0);
    await net.heal();
    for (const node of NODES) {
      const rules = execFileSync('ip', ['netns', 'exec', net.namespace(node), 'iptables-save']).toString();
      expect(rules).not.toMatch(/^-A /m);
    }
  });

  it('delays a link through the delay proxy, and says when it reset the connections of its ends', async () => {
    const DELAY_MS = 300;
    // Without netem the delay redirects connections through a proxy: those open before are cut,
    // and stopping the proxy ends those it relayed. netem resets nothing.
    const proxied = !(await NetnsBackend.netemAvailable());
    expect(net.connectionCuts('n1')).toEqual([]);
    await net.degrade(
      [
        ['n1', 'n2'],
        ['n2', 'n1'],
      ],
      { target: 'one', delayMs: DELAY_MS },
    );
    const slow = ping('n1', 'n2', 5000);
    expect(slow.code).toBe(0);
    expect(slow.ms).toBeGreaterThanOrEqual(DELAY_MS);
    expect([net.connectionCuts('n1').length, net.connectionCuts('n2').length]).toEqual(
      proxied ? [1, 1] : [0, 0],
    );
    await net.heal();
    const fast = ping('n1', 'n2');
    expect(fast.code).toBe(0);
    expect(fast.ms).toBeLessThan(DELAY_MS);
    expect([net.connectionCuts('n1').length, net.connectionCuts('n2').length]).toEqual(
      proxied ? [2, 2] : [0, 0],
    );
    expect(net.connectionCuts('n3')).toEqual([]);
    const [cut, healed] = net.connectionCuts('n1');
    if (proxied) expect(healed).toBeGreaterThan(cut);
  });

  it('leaves no namespace, route, rule, link or rule loader behind after close', async () => {
    const hub = net.hubNamespace;
    const loaders = loaderPids();
    if (serverPid !== undefined) process.kill(-serverPid, 'SIGKILL');
    serverPid = undefined;
    await net.close();
    // Other runs may share the machine: look for this backend's names and subnet only.
    const listed = execFileSync('ip', ['netns', 'list']).toString();
    expect(listed).not.toContain(hub.replace(/hub$/, ''));
    expect(execFileSync('ip', ['-o', 'link', 'show']).toString()).not.toContain(net.rootVeth);
    const routes = execFileSync('ip', ['-4', 'route', 'show', 'table', 'all']).toString();
    expect(routes).not.toContain(net.subnet.replace(/\.0\/24$/, '.'));
    expect(rootRules()).toBe(rulesBefore);
    await new Promise((r) => setTimeout(r, 200));
    expect(loaders.filter((pid) => existsSync(`/proc/${pid}`))).toEqual([]);
  });
});
