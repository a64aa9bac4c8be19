/**
 * From a finding to a small, replayable schedule, per kvraft bug switch: a policy campaign
 * (`--stop-on-bug`, default policy) finds the bug; `mallory replay --repeat R` says how often its
 * schedule reproduces it; `mallory shrink --repeat 3` shrinks it; the shrunk schedule is replayed
 * `R` times. Prints one row per switch. Needs `npm run build` (and root, FUSE and gcc for
 * `ack-before-fsync`'s disk faults).
 *
 * `npx tsx bench/replay-shrink.ts [bug,bug,…|all] [time=10m] [repeat=10] [seed=11]`
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

import { KVRAFT_BUGS, kvraftBugArgs } from '../src/systems/kvraft/bugs.js';

const REPO = resolve(import.meta.dirname, '..');
const BIN = join(REPO, 'bin', 'mallory.js');
const ONLY = process.argv[2] && process.argv[2] !== 'all' ? process.argv[2].split(',') : undefined;
const TIME = process.argv[3] ?? '10m';
const REPEAT = process.argv[4] ?? '10';
const SEED = process.argv[5] ?? '11';
const SHRINK_REPEAT = '3';

interface Found {
  readonly bugs: readonly { readonly dir: string; readonly kind: string; readonly name: string }[];
  readonly elapsedMs: number;
}
interface Replayed {
  readonly reproduced: number;
  readonly tries: readonly unknown[];
}
interface Shrunk {
  readonly before: { readonly faults: number };
  readonly after?: { readonly faults: number; readonly reproduced: number; readonly tries: number };
  readonly shrunk?: string;
  readonly candidates: readonly unknown[];
}

function mallory(args: readonly string[]): { json: unknown; seconds: number } {
  const started = Date.now();
  const r = spawnSync(process.execPath, [BIN, ...args, '--json'], {
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let json: unknown;
  try {
    json = JSON.parse(r.stdout);
  } catch {
    json = undefined;
  }
  return { json, seconds: (Date.now() - started) / 1000 };
}

function asFound(args: readonly string[]): { json: Found | undefined; seconds: number } {
  const r = mallory(args);
  return { json: r.json as Found | undefined, seconds: r.seconds };
}
function asReplayed(args: readonly string[]): { json: Replayed | undefined; seconds: number } {
  const r = mallory(args);
  return { json: r.json as Replayed | undefined, seconds: r.seconds };
}
function asShrunk(args: readonly string[]): { json: Shrunk | undefined; seconds: number } {
  const r = mallory(args);
  return { json: r.json as Shrunk | undefined, seconds: r.seconds };
}
const rows: string[] = [];
for (const bug of KVRAFT_BUGS.filter((b) => !ONLY || ONLY.includes(b))) {
  const store = mkdtempSync(join(tmpdir(), 'mallory-replay-shrink-'));
  try {
    const found = asFound([
      'run',
      ...kvraftBugArgs(bug),
      '--stop-on-bug',
      '--time',
      TIME,
      '--seed',
      SEED,
      '--store',
      store,
    ]);
    const first = found.json?.bugs[0];
    if (!first) {
      rows.push(`${bug}: not found by a ${TIME} campaign (seed ${SEED})`);
      continue;
    }
    const replay = asReplayed(['replay', first.dir, '--repeat', REPEAT, '--store', store]);
    const shrink = asShrunk(['shrink', first.dir, '--repeat', SHRINK_REPEAT, '--store', store]);
    const after = shrink.json?.after;
    const again = shrink.json?.shrunk
      ? asReplayed(['replay', shrink.json.shrunk, '--repeat', REPEAT, '--store', store])
      : undefined;
    rows.push(
      `${bug}: found ${first.kind}/${first.name} in ${(found.json!.elapsedMs / 1000).toFixed(0)} s; ` +
        `replay ${replay.json?.reproduced ?? '?'}/${replay.json?.tries.length ?? '?'}; ` +
        (after
          ? `shrunk ${shrink.json!.before.faults} → ${after.faults} faults in ${shrink.json!.candidates.length} candidates (${shrink.seconds.toFixed(0)} s); ` +
            `shrunk replay ${again?.json?.reproduced ?? '?'}/${again?.json?.tries.length ?? '?'}`
          : `not shrunk (its own schedule reproduced under half of ${SHRINK_REPEAT})`),
    );
  } finally {
    rmSync(store, { recursive: true, force: true });
  }
  process.stdout.write(`${rows.at(-1) ?? ''}\n`);
}
process.stdout.write(
  `\nkvraft, policy adaptive, seed ${SEED}, campaign ${TIME}, replays of ${REPEAT}, shrink --repeat ${SHRINK_REPEAT}\n`,
);
for (const row of rows) process.stdout.write(`  ${row}\n`);
