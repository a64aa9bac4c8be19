import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import { scheduleFamilies } from '../../src/campaign/replay.js';
import { readSchedule, readScheduleHeader } from '../../src/campaign/schedule-file.js';

describe('a bug of a run on hosts, as replay reads it', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });
  function file(lines: readonly object[]): string {
    const dir = mkdtempSync(join(tmpdir(), 'mallory-replay-hosts-'));
    dirs.push(dir);
    const path = join(dir, 'schedule.jsonl');
    writeFileSync(path, lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
    return path;
  }
  const header = {
    system: 'redis',
    nodes: 3,
    seed: 1,
    bugs: [],
    workload: 'set',
    rate: 50,
    steps: 4,
    stepMs: 2500,
    network: 'auto',
    schedule: 0,
    finding: { kind: 'set', name: 'lost-elements' },
  };

  it('keeps the hosts and how they were reached in the schedule header', () => {
    const hosts = {
      hosts: [{ host: '10.0.0.1' }, { host: '10.0.0.2', port: 2222, username: 'admin' }],
      sshUsername: 'root',
      sshPort: 22,
      sshPrivateKey: '/keys/id',
      strictHostKeyChecking: 'accept-new',
      knownHosts: '/keys/known_hosts',
    };
    expect(readScheduleHeader(file([{ mallory: { ...header, hosts } }]))?.hosts).toEqual(hosts);
    expect(readScheduleHeader(file([{ mallory: header }]))?.hosts).toBeUndefined();
  });

  it('enables only the fault families its schedule uses (kill for a schedule of none)', () => {
    const path = file([
      { mallory: header },
      { atMs: 1000, f: 'start-partition', value: 'halves' },
      { atMs: 2000, f: 'pause', value: 'one' },
      { atMs: 3000, f: 'stop-partition' },
    ]);
    expect(scheduleFamilies(readSchedule(path))).toEqual(['partition', 'pause']);
    expect(scheduleFamilies([])).toEqual(['kill']);
  });
});
