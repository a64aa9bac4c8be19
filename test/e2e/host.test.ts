import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';

import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';

import { NAMESPACE_PREFIX, shortId } from '../../src/cluster/net/netns.js';
import { disposeSandbox, isRoot, sandbox, type Sandbox } from './helpers.js';
import { leftovers, snapshot } from './host.js';

/** A stored run with this id, as a campaign leaves it (`<store>/<system>/<run>/run.db`). */
function storeRun(box: Sandbox, id: string): void {
  const dir = join(box.store, 'kvraft', id);
  mkdirSync(dir, { recursive: true });
  const db = new Database(join(dir, 'run.db'));
  db.exec('CREATE TABLE run (id TEXT)');
  db.prepare('INSERT INTO run (id) VALUES (?)').run(id);
  db.close();
}

/** A process re-parented to init (as a killed fuzzer's nodes are), with the given environment; its PID. */
function orphan(env: NodeJS.ProcessEnv): number {
  const r = spawnSync('sh', ['-c', 'sleep 60 >/dev/null 2>&1 & echo $!'], { env, encoding: 'utf8' });
  return Number(r.stdout.trim());
}

describe.skipIf(!isRoot)('the host comparison of the leak tests', () => {
  const boxes: Sandbox[] = [];
  const namespaces: string[] = [];
  const pids: number[] = [];
  afterEach(() => {
    for (const pid of pids.splice(0)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone already
      }
    }
    for (const ns of namespaces.splice(0)) spawnSync('ip', ['netns', 'del', ns]);
    for (const b of boxes.splice(0)) disposeSandbox(b);
  });

  it('sees what its own runs left and not what another run on the host makes', () => {
    const box = sandbox();
    const other = sandbox();
    boxes.push(box, other);
    const before = snapshot();
    storeRun(box, 'ownrun1');
    storeRun(other, 'otherrun1');
    const own = `${NAMESPACE_PREFIX}${shortId('ownrun1')}-n1`;
    const foreign = `${NAMESPACE_PREFIX}${shortId('otherrun1')}-n1`;
    for (const ns of [own, foreign]) {
      execFileSync('ip', ['netns', 'add', ns]);
      namespaces.push(ns);
    }
    const shm = mkdtempSync('/dev/shm/mallory-ownrun1-');
    const foreignShm = mkdtempSync('/dev/shm/mallory-otherrun1-');
    const ownPid = orphan(box.env);
    const foreignPid = orphan(other.env);
    pids.push(ownPid, foreignPid);
    try {
      const left = leftovers(before, box);
      expect(left).toContain(`namespaces: ${own}`);
      expect(left).toContain(`shm: ${shm.slice('/dev/shm/'.length)}`);
      expect(left.some((l) => l.startsWith(`process ${ownPid}:`))).toBe(true);
      expect(left.filter((l) => l.includes('otherrun1') || l.includes(foreign))).toEqual([]);
      expect(left.some((l) => l.startsWith(`process ${foreignPid}:`))).toBe(false);
      expect(leftovers(before, other)).toContain(`namespaces: ${foreign}`);
    } finally {
      rmSync(shm, { recursive: true, force: true });
      rmSync(foreignShm, { recursive: true, force: true });
    }
  });
});
