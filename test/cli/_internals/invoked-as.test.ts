import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { invokedAs } from '../../../src/cli/_internals/invoked-as.js';

let root: string;
let script: string;
beforeEach(() => {
  root = mkdtempSync(path.join(tmpdir(), 'mallory-invoked-as-'));
  mkdirSync(path.join(root, 'repo', 'bin'), { recursive: true });
  script = path.join(root, 'repo', 'bin', 'mallory.js');
  writeFileSync(script, '#!/usr/bin/env node\n');
});
afterEach(() => {
  rmSync(root, { recursive: true, force: true });
});

describe('invokedAs', () => {
  it('says mallory when mallory on the PATH is this program (npm link makes such a symlink)', () => {
    const bin = path.join(root, 'global-bin');
    mkdirSync(bin);
    symlinkSync(script, path.join(bin, 'mallory'));
    expect(invokedAs(script, `/nonexistent${path.delimiter}${bin}`, root)).toBe('mallory');
  });

  it('says the script as run from here when mallory is not on the PATH, or is another program', () => {
    const other = path.join(root, 'other-bin');
    mkdirSync(other);
    writeFileSync(path.join(other, 'mallory'), '#!/bin/sh\n');
    const repo = path.join(root, 'repo');
    expect(invokedAs(script, other, repo)).toBe('./bin/mallory.js');
    expect(invokedAs(script, '', path.join(repo, 'bin'))).toBe('./mallory.js');
    expect(invokedAs(script, undefined, path.join(root, 'elsewhere'))).toBe(script);
  });
});
