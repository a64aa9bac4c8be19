import { existsSync, readFileSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

import { UsageError } from '../../core/errors.js';

/** One host of `--hosts`: a line of the hosts file, or an item of the list. */
export interface HostEntry {
  readonly host: string;
  readonly port?: number | undefined;
  readonly username?: string | undefined;
  readonly privateKey?: string | undefined;
}

const MAX_PORT = 65_535;

/** `~/.ssh/known_hosts`, OpenSSH's file. */
export function defaultKnownHosts(): string {
  return join(homedir(), '.ssh', 'known_hosts');
}

/**
 * `--hosts FILE|h1,h2,…`: a file (one host a line, `#` comments) or a comma-separated list. Each
 * host is `[user@]host[:port]`, a file's line may add `ssh-private-key=PATH` (an IPv6 address in
 * brackets: `[::1]:2222`).
 */
export function parseHosts(spec: string): HostEntry[] {
  const isFile = existsSync(spec) && statSync(spec).isFile();
  const items = isFile
    ? readFileSync(spec, 'utf8')
        .split('\n')
        .map((l) => l.replace(/#.*/, '').trim())
        .filter((l) => l !== '')
    : spec.split(',').map((s) => s.trim());
  const where = isFile ? `--hosts ${spec}` : '--hosts';
  if (items.length === 0 || items.some((i) => i === '')) {
    throw new UsageError(
      'bad-flag',
      `${where}: no host given: list hosts as h1,h2,h3 or in a file, one a line`,
    );
  }
  return items.map((item) => parseEntry(item, where));
}

function parseEntry(item: string, where: string): HostEntry {
  const [address, ...options] = item.split(/\s+/);
  const bad = (why: string): UsageError =>
    new UsageError(
      'bad-flag',
      `${where}: "${item}": ${why}: write [user@]host[:port] [ssh-private-key=PATH]`,
    );
  let privateKey: string | undefined;
  for (const option of options) {
    const m = /^ssh-private-key=(.+)$/.exec(option);
    if (!m) throw bad(`unknown field "${option}"`);
    privateKey = m[1];
  }
  const m = /^(?:([^@\s]+)@)?(\[[^\]]+\]|[^:@\s]+)(?::(\d+))?$/.exec(address);
  if (!m) throw bad('not a host');
  const port = m[3] === undefined ? undefined : Number(m[3]);
  if (port !== undefined && (port < 1 || port > MAX_PORT)) throw bad(`port ${port} is not 1–${MAX_PORT}`);
  return { host: m[2].replace(/^\[|\]$/g, ''), port, username: m[1], privateKey };
}
