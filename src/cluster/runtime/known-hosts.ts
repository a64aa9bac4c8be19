import { createHmac } from 'node:crypto';
import { appendFileSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';

/** OpenSSH's `StrictHostKeyChecking`: `yes` accepts only known keys, `accept-new` adds an unknown host's key, `no` checks nothing. */
export const HOST_KEY_CHECKING = ['yes', 'accept-new', 'no'] as const;
export type HostKeyChecking = (typeof HOST_KEY_CHECKING)[number];

export type HostKeyVerdict =
  { readonly ok: true; readonly added?: true } | { readonly ok: false; readonly reason: string };

const DEFAULT_SSH_PORT = 22;

/** How known_hosts names a host: `host` on port 22, `[host]:port` otherwise. */
function hostPattern(host: string, port: number): string {
  return port === DEFAULT_SSH_PORT ? host : `[${host}]:${port}`;
}

/** The key type a public key blob names (its first SSH string). */
function keyType(blob: Buffer): string {
  const length = blob.readUInt32BE(0);
  return blob.subarray(4, 4 + length).toString('ascii');
}

function namesHost(field: string, pattern: string): boolean {
  return field.split(',').some((name) => {
    if (name.startsWith('|1|')) {
      const [, , salt, hash] = name.split('|');
      if (salt === undefined || hash === undefined) return false;
      const mac = createHmac('sha1', Buffer.from(salt, 'base64')).update(pattern).digest('base64');
      return mac === hash;
    }
    return name === pattern;
  });
}

/**
 * Checks a host's key against a known_hosts file (plain and hashed host names, `[host]:port`), as
 * OpenSSH does: a known host whose key differs is refused whatever the mode.
 */
export function verifyHostKey(
  file: string,
  host: string,
  port: number,
  key: Buffer,
  mode: HostKeyChecking,
): HostKeyVerdict {
  if (mode === 'no') return { ok: true };
  const pattern = hostPattern(host, port);
  let text = '';
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    // no file: every host is unknown
  }
  const offered = key.toString('base64');
  let known = false;
  for (const line of text.split('\n')) {
    const fields = line.trim().split(/\s+/);
    if (fields.length < 3 || fields[0].startsWith('#')) continue;
    if (fields[0].startsWith('@')) fields.shift();
    if (!namesHost(fields[0], pattern)) continue;
    if (fields[2] === offered) return { ok: true };
    if (fields[1] === keyType(key)) known = true;
  }
  if (known) {
    return {
      ok: false,
      reason: `its ${keyType(key)} host key is not the one ${file} holds for it (changed, or another machine): check it, then remove the old line (ssh-keygen -R '${pattern}' -f ${file})`,
    };
  }
  if (mode === 'accept-new') {
    mkdirSync(dirname(file), { recursive: true });
    appendFileSync(file, `${pattern} ${keyType(key)} ${offered}\n`, { mode: 0o600 });
    return { ok: true, added: true };
  }
  return {
    ok: false,
    reason: `its host key is not in ${file}: add it (ssh-keyscan -p ${port} ${host} >> ${file}) or pass --strict-host-key-checking accept-new`,
  };
}
