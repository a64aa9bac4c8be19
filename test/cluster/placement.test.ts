import { describe, expect, it } from 'vitest';

import { capabilitiesOf, hasDiskLayer } from '../../src/cluster/placement.js';
import { localRuntime } from '../../src/cluster/runtime/local.js';

describe('placement: where the nodes run, as one value', () => {
  it('knows what each place can do before its runtime is built, as the runtime declares it', () => {
    expect(capabilitiesOf('local')).toEqual(localRuntime().capabilities);
    expect(capabilitiesOf('local').sharedFilesystem).toBe(true);
    expect(capabilitiesOf('ssh')).toMatchObject({ sharedFilesystem: false, fuse: true, libfaketime: true });
    expect(capabilitiesOf('docker')).toMatchObject({
      sharedFilesystem: false,
      netem: false,
      fuse: false,
      libfaketime: false,
      checkpoints: false,
    });
  });

  it('says whether the nodes get the disk layer, here or on the hosts', () => {
    expect(hasDiskLayer({ kind: 'local', netns: true, diskLayerBinary: '/tmp/mallory-disk' })).toBe(true);
    expect(hasDiskLayer({ kind: 'local', netns: true })).toBe(false);
    expect(hasDiskLayer({ kind: 'ssh', targets: [], disk: true })).toBe(true);
    expect(hasDiskLayer({ kind: 'ssh', targets: [], disk: false })).toBe(false);
    expect(hasDiskLayer({ kind: 'docker', image: 'etcd', endpoint: { binary: 'docker' } })).toBe(false);
  });
});
