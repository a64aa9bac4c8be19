import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { ResourceRegistry } from './resources.js';

/**
 * A temp dir for work done outside a run's own registry (the checks before a run on hosts or in
 * containers, `doctor --hosts`): it has a registry of its own in the state dir, and is recorded
 * there before it is made, so a fuzzer killed while it exists leaves it to `mallory cleanup`.
 * Whatever else the work makes may be recorded in `registry` too; `dispose` removes it all.
 */
export class ScratchDir {
  readonly path: string;
  readonly registry: ResourceRegistry;

  constructor(what: string) {
    const name = `mallory-${what}-${process.pid}-${randomBytes(4).toString('hex')}`;
    this.registry = new ResourceRegistry(name);
    this.path = join(tmpdir(), name);
    try {
      this.registry.record({ kind: 'dir', path: this.path });
      mkdirSync(this.path, { mode: 0o700 });
    } catch (error) {
      this.registry.releaseAll();
      throw error;
    }
  }

  /** Removes what the registry still holds (newest first), the dir, then the registry file. */
  dispose(): void {
    this.registry.releaseAll();
  }
}
