/**
 * The delay proxy run inside a sender's namespace (`ip netns exec NS node -e DELAY_PROXY_SCRIPT
 * CONFIG`). iptables REDIRECTs the sender's connections to a peer's service port to one of these
 * listeners; the proxy opens the real connection from the sender's own address (so cuts, loss and
 * capture still see the right source) and holds every chunk `delayMs` before forwarding it.
 *
 * It runs as its own process because a Node process cannot bind inside another namespace; it is
 * plain JavaScript so it needs no build step. It switches to `gid` so the REDIRECT rule can exempt its
 * own outgoing connections (`-m owner ! --gid-owner GID`).
 */
export interface DelayProxyConfig {
  readonly gid: number;
  readonly sourceHost: string;
  readonly routes: readonly {
    readonly listenPort: number;
    readonly host: string;
    readonly port: number;
    readonly forwardDelayMs: number;
    readonly reverseDelayMs: number;
  }[];
}

/** Group id the proxy runs under; no node process uses it. */
export const DELAY_PROXY_GID = 47_011;

export const DELAY_PROXY_SCRIPT = `
'use strict';
const net = require('node:net');
const cfg = JSON.parse(process.argv[1]);
process.setgid(cfg.gid);
function pipe(from, to, delayMs) {
  from.on('data', (chunk) => {
    if (delayMs <= 0) { to.write(chunk); return; }
    setTimeout(() => { if (!to.destroyed) to.write(chunk); }, delayMs);
  });
  from.on('end', () => setTimeout(() => to.end(), delayMs));
}
let pending = cfg.routes.length;
for (const r of cfg.routes) {
  const server = net.createServer((client) => {
    const upstream = net.connect({ host: r.host, port: r.port, localAddress: cfg.sourceHost });
    const destroy = () => { client.destroy(); upstream.destroy(); };
    client.on('error', destroy); upstream.on('error', destroy);
    const linger = Math.max(r.forwardDelayMs, r.reverseDelayMs);
    client.on('close', () => setTimeout(destroy, linger));
    upstream.on('close', () => setTimeout(destroy, linger));
    pipe(client, upstream, r.forwardDelayMs);
    pipe(upstream, client, r.reverseDelayMs);
  });
  server.listen(r.listenPort, '127.0.0.1', () => { if (--pending === 0) process.stdout.write('ready\\n'); });
}
if (pending === 0) process.stdout.write('ready\\n');
`;
