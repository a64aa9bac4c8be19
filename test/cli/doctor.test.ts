import { execFileSync } from 'node:child_process';

import { describe, expect, it } from 'vitest';

import { diagnose, formatRows } from '../../src/cli/doctor.js';

describe('mallory doctor', () => {
  it('checks the machine and every system, and leaves no namespace behind', async () => {
    const rows = await diagnose();
    const areas = new Set(rows.map((r) => r.area));
    for (const area of [
      'node',
      'root',
      'ip',
      'iptables',
      'tcpdump',
      'system etcd',
      'system redis',
      'system dqlite',
    ]) {
      expect(areas).toContain(area);
    }
    for (const r of rows.filter((x) => x.status === 'missing')) expect(r.fix).toBeTruthy();
    // Disk faults are optional, for the systems that take them; a system's settings are listed.
    const disk = rows.find((r) => r.area === 'disk');
    expect(disk?.what).toContain('the FUSE disk layer, for kvraft, etcd, redis');
    expect(disk?.status).not.toBe('missing');
    expect(rows).toContainEqual({
      status: 'ok',
      area: 'system redis',
      what: 'settings (--set): redis takes appendfsync=everysec|always',
    });
    if (process.getuid?.() === 0) {
      expect(rows.find((r) => r.area === 'netem')).toBeDefined();
      const listed = execFileSync('ip', ['netns', 'list']).toString();
      expect(listed).not.toContain(`mallory-doctor-${process.pid}`);
    }
  });

  it('prints the fix under a missing row', () => {
    const text = formatRows([
      { status: 'ok', area: 'ip', what: 'ip utility' },
      { status: 'missing', area: 'tcpdump', what: '`tcpdump` not found', fix: 'apt-get install -y tcpdump' },
    ]);
    expect(text).toMatch(/^ok\s+ip\s+ip utility$/m);
    expect(text).toMatch(/^MISSING\s+tcpdump\s+`tcpdump` not found\n\s+fix: apt-get install -y tcpdump$/m);
  });
});
