import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { hostsOfRun } from '../../src/campaign/replay.js';

describe('hostsOfRun', () => {
  let runDir: string;
  beforeEach(() => {
    runDir = mkdtempSync(join(tmpdir(), 'mallory-replay-hosts-'));
    mkdirSync(join(runDir, 'bugs', '1'), { recursive: true });
  });
  afterEach(() => {
    rmSync(runDir, { recursive: true, force: true });
  });
  const results = (config: object): void => {
    writeFileSync(join(runDir, 'results.json'), JSON.stringify({ run: { id: 'x', config } }));
  };

  it("gives a bug of a run on hosts that run's hosts and how it reached them", () => {
    results({
      system: 'redis',
      hosts: [{ host: '10.0.0.1' }, { host: '10.0.0.2', port: 2222 }],
      sshPrivateKey: '/keys/id',
      knownHosts: '/keys/known_hosts',
      strictHostKeyChecking: 'accept-new',
    });
    expect(hostsOfRun(join(runDir, 'bugs', '1'))).toEqual({
      hosts: [{ host: '10.0.0.1' }, { host: '10.0.0.2', port: 2222 }],
      sshUsername: 'root',
      sshPrivateKey: '/keys/id',
      sshPort: 22,
      strictHostKeyChecking: 'accept-new',
      knownHosts: '/keys/known_hosts',
    });
  });

  it('gives nothing for a run on this machine, or a bug dir outside a run', () => {
    results({ system: 'redis' });
    expect(hostsOfRun(join(runDir, 'bugs', '1'))).toBeUndefined();
    expect(hostsOfRun(join(runDir, 'elsewhere'))).toBeUndefined();
  });
});
