import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import {
  BuiltPrograms,
  fileHash,
  librariesMissingOn,
  librariesUnresolvedOn,
  missingLibraries,
  neededLibraries,
  parseLdd,
  type ProgramHost,
} from '../../src/cluster/built-program.js';
import { run } from '../../src/core/exec.js';

const DQLITE_DEMO = '/usr/bin/dqlite-demo';

/** This machine as the host: its commands run here for real, an upload is a copy, and each is counted. */
function thisMachine(): ProgramHost & { uploads: string[] } {
  const uploads: string[] = [];
  return {
    host: 'local',
    uploads,
    exec: (argv) => run([...argv]),
    put: (to, from) => {
      uploads.push(to);
      copyFileSync(from, to);
      return Promise.resolve();
    },
  };
}

describe('built programs on hosts', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'mallory-built-program-'));
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('runs a program from its own path on a host that has the same file there, and copies nothing', async () => {
    const program = join(dir, 'server');
    writeFileSync(program, '#!/bin/sh\nexit 0\n', { mode: 0o755 });
    const host = thisMachine();
    const placed = await new BuiltPrograms(join(dir, 'run')).place(host, program);
    expect(placed).toBe(program);
    expect(host.uploads).toEqual([]);
  });

  it('copies a program the host lacks under the run dir, once per host however many nodes start at once', async () => {
    const program = join(dir, 'server');
    writeFileSync(program, '#!/bin/sh\nexit 0\n', { mode: 0o755 });
    const host = thisMachine();
    // The host's file at that path differs from this machine's.
    let calls = 0;
    const differing: ProgramHost = {
      ...host,
      exec: (argv) => {
        // The hash is asked once per host; the dir is made by a command of its own.
        if (argv[0] !== 'sha256sum') return host.exec(argv);
        calls++;
        return Promise.resolve({ code: 0, stdout: `${'0'.repeat(64)}  ${program}\n`, stderr: '' });
      },
    };
    const programs = new BuiltPrograms(join(dir, 'run'));
    const placed = await Promise.all([1, 2, 3].map(() => programs.place(differing, program)));
    const expected = join(dir, 'run', 'bin', fileHash(program).slice(0, 16), 'server');
    expect(placed).toEqual([expected, expected, expected]);
    expect(host.uploads).toEqual([expected]);
    expect(calls).toBe(1);
    expect(readFileSync(expected, 'utf8')).toBe(readFileSync(program, 'utf8'));
  });

  it('reads the libraries a program loads from ldd, and which of them a host lacks', async () => {
    expect(
      parseLdd(
        '\tlinux-vdso.so.1 (0x00007ffd)\n\tlibdqlite.so.0 => /lib/x86_64-linux-gnu/libdqlite.so.0 (0x1)\n\tlibraft.so.2 => not found\n\t/lib64/ld-linux-x86-64.so.2 (0x2)\n',
      ),
    ).toEqual([
      { name: 'libdqlite.so.0', path: '/lib/x86_64-linux-gnu/libdqlite.so.0' },
      { name: 'libraft.so.2', path: undefined },
    ]);
    expect(await librariesMissingOn(thisMachine(), ['libc.so.6', 'libmallory-none.so.9'])).toEqual([
      'libmallory-none.so.9',
    ]);
  });

  it.skipIf(!existsSync(DQLITE_DEMO))(
    "names dqlite-demo's libraries and the Debian packages they come from",
    async () => {
      const needed = neededLibraries(DQLITE_DEMO);
      expect(needed).toEqual(expect.arrayContaining(['libdqlite.so.0', 'libraft.so.2', 'libsqlite3.so.0']));
      expect(await librariesUnresolvedOn(thisMachine(), 'dqlite-demo')).toEqual([]);
      const problem = missingLibraries('n3', DQLITE_DEMO, ['libdqlite.so.0', 'libraft.so.2']);
      expect(problem.what).toBe(
        "n3's program /usr/bin/dqlite-demo needs shared libraries the host lacks (libdqlite.so.0, libraft.so.2)",
      );
      expect(problem.fix).toMatch(
        /^install them there \(Debian: apt-get install -y libdqlite0 libraft\S*\)$/,
      );
    },
  );
});
