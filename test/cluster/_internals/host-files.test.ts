import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { HostFiles } from '../../../src/cluster/_internals/host-files.js';

describe('HostFiles', () => {
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'mallory-host-files-'));
  });
  afterEach(() => {
    rmSync(root, { recursive: true, force: true });
  });

  it('owes what a call wrote under a node dir to that node, and a shared file to every node', async () => {
    const files = new HostFiles(root, ['n1', 'n2']);
    await files.track(() => {
      writeFileSync(join(root, 'shared.conf'), 'x');
    });
    await files.track(() => {
      mkdirSync(join(root, 'n1', 'sub'), { recursive: true });
      writeFileSync(join(root, 'n1', 'sub', 'node.conf'), 'a');
      mkdirSync(join(root, 'nodes', 'n2'), { recursive: true });
      writeFileSync(join(root, 'nodes', 'n2', 'probe.cfg'), 'b');
    });
    expect(files.take('n1')).toEqual({
      dirs: [join(root, 'n1'), join(root, 'n1', 'sub'), join(root, 'nodes')],
      files: [join(root, 'n1', 'sub', 'node.conf'), join(root, 'shared.conf')],
    });
    expect(files.take('n2')).toEqual({
      dirs: [join(root, 'nodes'), join(root, 'nodes', 'n2')],
      files: [join(root, 'nodes', 'n2', 'probe.cfg'), join(root, 'shared.conf')],
    });
    // Taken: nothing is owed until a call writes again.
    expect(files.take('n1')).toEqual({ dirs: [], files: [] });
  });

  it('does not owe a file again that a later call left alone, and owes it again once rewritten', async () => {
    const files = new HostFiles(root, ['n1']);
    const conf = join(root, 'n1', 'redis.conf');
    const launch = (): void => {
      mkdirSync(join(root, 'n1'), { recursive: true });
      try {
        writeFileSync(conf, 'port 6379\n', { flag: 'wx' });
      } catch {
        // written once, as Redis's adapter does
      }
    };
    await files.track(launch);
    expect(files.take('n1').files).toEqual([conf]);
    await files.track(launch);
    expect(files.take('n1').files).toEqual([]);
    // A wipe removes what was written here, so the next launch writes (and owes) it again.
    files.wiped('n1', join(root, 'n1'));
    await files.track(launch);
    expect(files.take('n1').files).toEqual([conf]);
  });

  it('forgets what was owed under a wiped data dir', async () => {
    const files = new HostFiles(root, ['n1']);
    await files.track(() => {
      mkdirSync(join(root, 'n1'), { recursive: true });
      writeFileSync(join(root, 'n1', 'a'), 'a');
    });
    files.wiped('n1', join(root, 'n1'));
    expect(files.take('n1')).toEqual({ dirs: [join(root, 'n1')], files: [] });
  });
});
