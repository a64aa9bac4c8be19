import { describe, expect, it } from 'vitest';

import { formatHostRows } from '../../../src/cli/_internals/doctor-hosts.js';
import { run } from '../../../src/core/exec.js';
import { shellLine } from '../../../src/core/shell.js';
import { checkBinary, checkingBinariesWith } from '../../../src/systems/check-binary.js';

/** Runs argv through `sh -c`, as a host's SSH runtime does. */
const throughShell = (argv: readonly string[]): ReturnType<typeof run> => run(['sh', '-c', shellLine(argv)]);

describe('doctor --hosts', () => {
  it("runs a system's binary checks through the host's runner: a command the shell cannot find is missing", async () => {
    const seen: string[] = [];
    const findings = await checkingBinariesWith(
      (argv) => {
        seen.push(argv.join(' '));
        return throughShell(argv);
      },
      () =>
        Promise.all([
          checkBinary('sh', ['-c', 'echo from-the-host'], 'dash', 'shell'),
          checkBinary('mallory-no-such-binary', ['--version'], 'nothing', 'absent'),
        ]),
    );
    expect(seen).toEqual(['sh -c echo from-the-host', 'mallory-no-such-binary --version']);
    expect(findings).toEqual([
      { ok: true, what: 'shell: from-the-host' },
      { ok: false, what: 'absent: `mallory-no-such-binary` not found', fix: 'apt-get install -y nothing' },
    ]);
    // Outside it, checks run here again.
    expect(await checkBinary('sh', ['-c', 'echo here'], 'dash', 'shell')).toEqual({
      ok: true,
      what: 'shell: here',
    });
  });

  it('prints one line per host: what it has, or what it lacks with the fix', () => {
    const text = formatHostRows([
      { host: '10.0.0.1', node: 'n1', ok: true, has: ['root', 'iptables'], missing: [] },
      {
        host: '10.0.0.2',
        node: 'n2',
        ok: false,
        has: ['root'],
        missing: [{ what: 'iptables (partitions)', fix: 'apt-get install -y iptables' }, { what: 'x' }],
      },
    ]);
    expect(text.split('\n')).toEqual([
      'ok       host 10.0.0.1 (n1): root, iptables',
      'MISSING  host 10.0.0.2 (n2): iptables (partitions) (fix: apt-get install -y iptables); x',
    ]);
  });

  it('says what a host lacks only for faults asked for by name, the host still ok', () => {
    const text = formatHostRows([
      {
        host: '10.0.0.3',
        node: 'n3',
        ok: true,
        has: ['root'],
        missing: [],
        optional: [{ what: 'libfaketime (clock faults)', fix: 'apt-get install -y faketime' }],
      },
    ]);
    expect(text).toBe(
      'ok       host 10.0.0.3 (n3): root — without: libfaketime (clock faults) (fix: apt-get install -y faketime)',
    );
  });

  it('says per host whether disk faults can run there, and the fix when they cannot', () => {
    const text = formatHostRows([
      { host: '10.0.0.1', node: 'n1', ok: true, has: ['root'], missing: [], disk: [] },
      { host: '10.0.0.2', node: 'n2', ok: true, has: ['root'], missing: [], disk: ['gcc', 'libfuse3'] },
    ]);
    expect(text.split('\n')).toEqual([
      'ok       host 10.0.0.1 (n1): root; disk faults: yes',
      'ok       host 10.0.0.2 (n2): root; disk faults: no, lacks gcc, libfuse3 (fix: apt-get install -y gcc libfuse3-dev fuse3 pkg-config)',
    ]);
  });
});
