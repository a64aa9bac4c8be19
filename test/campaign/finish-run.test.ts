import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import type { Emit } from '../../src/campaign/_internals/emitter.js';
import { finishRun } from '../../src/campaign/_internals/finish-run.js';
import { outcomeOf } from '../../src/campaign/_internals/run-outcome.js';
import type { RunConfig } from '../../src/campaign/config.js';
import type { RunSummary } from '../../src/campaign/reporter.js';
import { ResourceRegistry } from '../../src/cluster/resources.js';
import { readStoredRun } from '../../src/store/run-reader.js';
import { RunStore } from '../../src/store/run-store.js';
import { StoreFullError } from '../../src/store/store-full.js';

describe('finishRun when the disk under the store filled up', () => {
  let root = '';
  let saved: string | undefined;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'mallory-finish-'));
    saved = process.env.MALLORY_STATE_DIR;
    process.env.MALLORY_STATE_DIR = join(root, 'state');
  });
  afterEach(() => {
    if (saved === undefined) delete process.env.MALLORY_STATE_DIR;
    else process.env.MALLORY_STATE_DIR = saved;
    rmSync(root, { recursive: true, force: true });
  });

  it('records nothing more and throws the full disk, the registry kept for cleanup, whatever space was left', async () => {
    const store = RunStore.create(join(root, 'store'), {
      id: 'full',
      system: 'kvraft',
      seed: 1,
      policy: 'random',
      config: { steps: 1, stepMs: 1000 },
    });
    const registry = new ResourceRegistry('full', store.dir);
    const full = new StoreFullError(store.dir, Object.assign(new Error('no space'), { code: 'ENOSPC' }));
    const outcome = outcomeOf(full);
    expect(outcome.storeFull).toBe(full);
    const summary = { status: 'error', error: full.message } as unknown as RunSummary;
    const events: string[] = [];
    await expect(
      finishRun(summary, outcome, {
        store,
        registry,
        config: { store: join(root, 'store') } as RunConfig,
        emit: ((event: string) => {
          events.push(event);
        }) as Emit,
      }),
    ).rejects.toBe(full);
    // Here the database had room: still, the run stays unfinished, as on a disk with none.
    expect(readStoredRun(store.dir).run.status).toBe('running');
    expect(existsSync(registry.file)).toBe(true);
    expect(existsSync(join(store.dir, 'report.html'))).toBe(false);
    expect(events).toEqual([]);
    registry.removeFile();
  });
});
