import {
  appendFileSync,
  chmodSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { ResourceRegistry } from '../../../src/cluster/resources.js';
import { followFile } from '../../../src/cluster/runtime/follow.js';
import { LOCAL_CAPABILITIES, LocalRuntime } from '../../../src/cluster/runtime/local.js';
import type { NodeRuntime } from '../../../src/cluster/runtime/runtime.js';
import { waitUntil } from './_helpers/wait-until.js';

/**
 * This machine's runtime declaring that its files are not the fuzzer's: `followFile` then takes
 * the path of a remote place (tails run through the runtime's own `exec`), on real processes here.
 */
function notSharingFiles(): NodeRuntime {
  const local = new LocalRuntime();
  return {
    place: local.place,
    host: 'local-as-remote',
    capabilities: { ...LOCAL_CAPABILITIES, sharedFilesystem: false },
    start: (spec, registry) => local.start(spec, registry),
    signal: (proc, signal) => local.signal(proc, signal),
    exec: (argv, options) => local.exec(argv, options),
    put: (path, file) => local.put(path, file),
    get: (path) => local.get(path),
    close: () => local.close(),
  };
}

/** The processes of this machine whose command line names `needle`. */
function processesNaming(needle: string): string[] {
  const found: string[] = [];
  for (const pid of readdirPids()) {
    try {
      const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
      if (args.includes(needle)) found.push(args);
    } catch {
      // gone
    }
  }
  return found;
}

/** The labels of what a registry file holds and has not released. */
function liveLabels(file: string): string[] {
  const live = new Map<number, string>();
  for (const line of readFileSync(file, 'utf8').split('\n').filter(Boolean)) {
    const entry = JSON.parse(line) as { t: string; id?: number; resource?: { label?: string } };
    if (entry.t === 'add' && entry.id !== undefined) live.set(entry.id, entry.resource?.label ?? '');
    if (entry.t === 'release' && entry.id !== undefined) live.delete(entry.id);
  }
  return [...live.values()];
}

function readdirPids(): number[] {
  return readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .map(Number);
}

describe('followFile on a place whose files are not this machine’s', () => {
  let root: string;
  let registry: ResourceRegistry;
  const path = process.env.PATH;

  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'mallory-follow-'));
    process.env.MALLORY_STATE_DIR = join(root, 'state');
    registry = new ResourceRegistry(`follow${process.pid}`);
  });

  afterEach(() => {
    process.env.PATH = path;
    registry.releaseAll();
    delete process.env.MALLORY_STATE_DIR;
    rmSync(root, { recursive: true, force: true });
  });

  it('follows two files asked for together by one GNU tail command, records it, and stop leaves no tail', async () => {
    const runtime = notSharingFiles();
    const [a, b] = [join(root, 'stdout.log'), join(root, 'stderr.log')];
    writeFileSync(a, Buffer.from([0, 255, 10]));
    let gotA = Buffer.alloc(0);
    let gotB = '';
    const streamA = followFile(runtime, a, (c) => (gotA = Buffer.concat([gotA, c])), registry);
    const streamB = followFile(runtime, b, (c) => (gotB += c.toString()), registry);
    appendFileSync(b, 'late\n');
    await waitUntil(() => gotA.length === 3 && gotB === 'late\n', 'both files');
    await waitUntil(
      () => liveLabels(registry.file).some((l) => l.startsWith('tail ') && l.endsWith(`(${a}, ${b})`)),
      'the tail recorded',
    );
    appendFileSync(a, 'written before stop\n');
    await streamA.stop();
    expect(gotA).toEqual(Buffer.concat([Buffer.from([0, 255, 10]), Buffer.from('written before stop\n')]));
    appendFileSync(b, 'more\n');
    await waitUntil(() => gotB === 'late\nmore\n', 'the other file still followed');
    await streamB.stop();
    expect(processesNaming(a)).toEqual([]);
    expect(liveLabels(registry.file).filter((l) => l.includes(a))).toEqual([]);
  });

  it('without GNU tail, follows by a tail -F of its own, and stop delivers what was written before it', async () => {
    const bin = join(root, 'bin');
    mkdirSync(bin);
    // A tail that is not GNU's as far as `--version` tells (BSD's and busybox's have no such flag).
    writeFileSync(join(bin, 'tail'), '#!/bin/sh\n[ "$1" = --version ] && exit 1\nexec /usr/bin/tail "$@"\n');
    chmodSync(join(bin, 'tail'), 0o755);
    process.env.PATH = `${bin}:${path ?? ''}`;
    const runtime = notSharingFiles();
    const file = join(root, 'probe.jsonl');
    let got = '';
    const stream = followFile(runtime, file, (c) => (got += c.toString()), registry);
    appendFileSync(file, 'one\n');
    await waitUntil(() => got === 'one\n', 'the first line');
    appendFileSync(file, 'two\n');
    await stream.stop();
    expect(got).toBe('one\ntwo\n');
    expect(processesNaming(file)).toEqual([]);
  });
});
