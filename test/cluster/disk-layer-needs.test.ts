import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import { diskHostRefusal, diskLayerFixFor, diskLayerNeedsOn } from '../../src/cluster/disk-layer.js';
import { LocalRuntime } from '../../src/cluster/runtime/local.js';

describe('what a host needs for the disk layer', () => {
  const savedPath = process.env.PATH;
  const dirs: string[] = [];
  afterEach(() => {
    process.env.PATH = savedPath;
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  it('names what a host without the build tools lacks, and the refusal says it in one line with the fix', async () => {
    // A host whose PATH has none of the tools: the probe runs there (a real shell), not a stub.
    const empty = mkdtempSync(join(tmpdir(), 'mallory-no-tools-'));
    dirs.push(empty);
    process.env.PATH = empty;
    const missing = await diskLayerNeedsOn(new LocalRuntime());
    // pkg-config absent: libfuse3 cannot be asked for, so it is not named.
    expect(missing.filter((m) => m !== '/dev/fuse')).toEqual(['gcc', 'pkg-config', 'fusermount3']);
    expect(diskHostRefusal('10.0.0.3', ['gcc', 'libfuse3'])).toBe(
      'host 10.0.0.3: disk faults build and mount a FUSE layer there, and it lacks gcc, libfuse3: run apt-get install -y gcc libfuse3-dev fuse3 pkg-config on the host, or drop disk from --faults',
    );
    const line = diskHostRefusal('h1', missing);
    expect(line.split('\n')).toHaveLength(1);
    expect(line).toContain('lacks gcc, pkg-config, fusermount3');
  });

  it('says to load fuse when /dev/fuse is what is missing', () => {
    expect(diskLayerFixFor(['/dev/fuse'])).toBe('modprobe fuse (for /dev/fuse)');
    expect(diskLayerFixFor(['/dev/fuse', 'gcc'])).toBe(
      'modprobe fuse (for /dev/fuse) and apt-get install -y gcc libfuse3-dev fuse3 pkg-config',
    );
  });
});
