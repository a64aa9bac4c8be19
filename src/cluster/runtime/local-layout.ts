import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { LocalRuntime } from './local.js';
import type { NodeLayout } from './node-layout.js';

/** Temp data lives on tmpfs where there is one: real systems fsync a lot. */
function dataRoot(runId: string): string {
  const base = existsSync('/dev/shm') ? '/dev/shm' : tmpdir();
  return join(base, `mallory-${runId}`);
}

/** Every node on this machine, its data under a dir of the run's on tmpfs. */
export function localLayout(runId: string): NodeLayout {
  const runtime = new LocalRuntime();
  return {
    runtimeOf: () => runtime,
    root: dataRoot(runId),
    streamed: [],
    prepareHost: () => Promise.resolve(),
  };
}
