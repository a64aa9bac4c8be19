import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { ResourceRegistry } from '../../../src/cluster/resources.js';
import { localRuntime } from '../../../src/cluster/runtime/local.js';
import { undoOn } from '../../../src/cluster/runtime/undo-on.js';

describe('undoOn: what is made where a runtime runs, recorded once for every place', () => {
  let root: string;
  let registry: ResourceRegistry;

  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'mallory-undo-on-'));
    process.env.MALLORY_STATE_DIR = join(root, 'state');
    registry = new ResourceRegistry(`undoon${process.pid}`);
  });

  afterEach(() => {
    registry.releaseAll();
    rmSync(root, { recursive: true, force: true });
  });

  it('on this machine, runs the undo text when the registry releases it', () => {
    const file = join(root, 'made');
    writeFileSync(file, 'x');
    const id = registry.record(undoOn(localRuntime().place, `rm -f '${file}'`, `file ${file}`));
    registry.release(id);
    expect(existsSync(file)).toBe(false);
  });

  it('on an SSH host, is the host’s own record (reached again by its target); in a container, a docker exec as root', () => {
    const target = {
      host: '10.0.0.2',
      port: 22,
      username: 'root',
      knownHosts: '/root/.ssh/known_hosts',
      strictHostKeyChecking: 'yes' as const,
    };
    expect(undoOn({ kind: 'ssh', target }, 'rm -rf /tmp/x', 'dir /tmp/x')).toEqual({
      kind: 'remote',
      target,
      undo: 'rm -rf /tmp/x',
      label: 'dir /tmp/x',
    });
    expect(
      undoOn(
        { kind: 'docker', endpoint: { binary: '/usr/bin/docker' }, container: 'n1' },
        'rm -f /x',
        'file /x',
      ),
    ).toEqual({
      kind: 'command',
      undo: ['/usr/bin/docker', 'exec', '-u', '0', 'n1', 'sh', '-c', 'rm -f /x'],
      label: 'file /x',
    });
  });
});
