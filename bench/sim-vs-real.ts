/**
 * Every kvraft switch, found in the simulator and confirmed on real processes. Per switch, simulated
 * campaigns (`mallory run --sim <the switch's needs, its storage contract too> --stop-on-bug`), `adaptive` and `random` in
 * turn for seeds 1, 2, … until one finds it or SEEDS seeds a policy are spent; the finding replayed
 * once in the simulator (`mallory replay BUG`: exact, so one try tells); then, with REAL > 0,
 * the finding's schedule replayed on real kvraft processes (`mallory replay BUG --real --repeat
 * REAL`). Prints a table: the first simulated finding (policy, seed, virtual time, campaigns run)
 * and its real replays (k/REAL). Keeps every outcome in OUT and the bugs in OUT's store, so a second
 * sitting resumes (the real replays can run later, on a quiet machine).
 *
 * `npx tsx bench/sim-vs-real.ts [switches=all] [seeds=5] [time=10m] [real=0] [out=sim-vs-real.json]`
 * (build first: `npm run build`; the real replays need what kvraft needs, README.md)
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import { KVRAFT_BUGS, kvraftSimBugArgs, type KvraftBug } from '../src/systems/kvraft/bugs.js';

const [switchArg, seedArg, timeArg, realArg, outArg] = process.argv.slice(2);
const SWITCHES: KvraftBug[] =
  switchArg === undefined || switchArg === 'all'
    ? [...KVRAFT_BUGS]
    : switchArg.split(',').map((s) => {
        if (!(KVRAFT_BUGS as readonly string[]).includes(s)) throw new Error(`no kvraft switch ${s}`);
        return s as KvraftBug;
      });
const SEEDS = Number(seedArg ?? 5);
const TIME = timeArg ?? '10m';
const REAL = Number(realArg ?? 0);
const OUT = path.resolve(outArg ?? 'sim-vs-real.json');
const STORE = OUT.replace(/\.json$/, '') + '-store';
const BIN = path.resolve(import.meta.dirname, '..', 'bin', 'mallory.js');
const POLICIES = ['adaptive', 'random'];

interface Campaign {
  readonly policy: string;
  readonly seed: number;
  readonly found: boolean;
  /** Virtual ms of the first finding, else of the campaign's end. */
  readonly atMs: number;
  readonly wallMs: number;
  /** The first finding's bug dir and what it was. */
  readonly bug?: { readonly dir: string; readonly kind: string; readonly name: string };
}
interface SwitchResult {
  readonly campaigns: Campaign[];
  /** The simulated finding replayed once in the simulator (exact: one try tells). */
  sim?: { readonly reproduced: boolean };
  real?: { readonly reproduced: number; readonly tries: number; readonly wallMs: number };
}
type Saved = { time: string; switches: Record<string, SwitchResult> };

const saved: Saved = existsSync(OUT)
  ? (JSON.parse(readFileSync(OUT, 'utf8')) as Saved)
  : { time: TIME, switches: {} };
if (saved.time !== TIME)
  throw new Error(`${OUT} holds ${saved.time} campaigns, not ${TIME}: use another out file`);
function save(): void {
  writeFileSync(OUT, JSON.stringify(saved, null, 2));
}
mkdirSync(STORE, { recursive: true });

function runJson(args: string[]): { code: number | null; json: unknown; stderr: string } {
  const r = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', maxBuffer: 1 << 28 });
  let json: unknown;
  try {
    json = JSON.parse(r.stdout);
  } catch {
    json = undefined;
  }
  return { code: r.status, json, stderr: r.stderr };
}

for (const bug of SWITCHES) {
  const result: SwitchResult = (saved.switches[bug] ??= { campaigns: [] });
  for (let seed = 1; seed <= SEEDS && !result.campaigns.some((c) => c.found); seed++)
    for (const policy of POLICIES) {
      if (result.campaigns.some((c) => c.found)) break;
      if (result.campaigns.some((c) => c.policy === policy && c.seed === seed)) continue;
      const t0 = Date.now();
      const args = ['run', '--system', 'kvraft', ...kvraftSimBugArgs(bug), '--policy', policy];
      args.push('--seed', String(seed), '--time', TIME, '--stop-on-bug', '--store', STORE, '--json');
      const r = runJson(args);
      const summary = r.json as
        | { elapsedMs: number; bugs: { foundAtMs: number; dir: string; kind: string; name: string }[] }
        | undefined;
      if (summary === undefined)
        throw new Error(`${bug} ${policy} seed ${seed}: no summary (exit ${r.code})\n${r.stderr}`);
      const first = [...summary.bugs].sort((a, b) => a.foundAtMs - b.foundAtMs)[0];
      result.campaigns.push({
        policy,
        seed,
        found: first !== undefined,
        atMs: first?.foundAtMs ?? summary.elapsedMs,
        wallMs: Date.now() - t0,
        ...(first !== undefined ? { bug: { dir: first.dir, kind: first.kind, name: first.name } } : {}),
      });
      save();
      process.stderr.write(
        `${bug} ${policy} seed ${seed}: ${first ? `${first.kind}/${first.name} at ${(first.foundAtMs / 1000).toFixed(1)} s virtual` : 'not found'} (${((Date.now() - t0) / 1000).toFixed(1)} s wall)\n`,
      );
    }
  const found = result.campaigns.find((c) => c.found);
  if (found?.bug !== undefined && result.sim === undefined) {
    const r = runJson(['replay', found.bug.dir, '--store', STORE, '--json']);
    const replay = r.json as { reproduced: number } | undefined;
    if (replay === undefined) throw new Error(`${bug}: replay gave no result (exit ${r.code})\n${r.stderr}`);
    result.sim = { reproduced: replay.reproduced === 1 };
    save();
    process.stderr.write(
      `${bug}: replayed in the simulator: ${replay.reproduced === 1 ? 'reproduced' : 'not reproduced'}\n`,
    );
  }
  if (REAL > 0 && found?.bug !== undefined && result.real === undefined) {
    const t0 = Date.now();
    const r = runJson([
      'replay',
      found.bug.dir,
      '--real',
      '--repeat',
      String(REAL),
      '--store',
      STORE,
      '--json',
    ]);
    const replay = r.json as { reproduced: number } | undefined;
    if (replay === undefined)
      throw new Error(`${bug}: real replay gave no result (exit ${r.code})\n${r.stderr}`);
    result.real = { reproduced: replay.reproduced, tries: REAL, wallMs: Date.now() - t0 };
    save();
    process.stderr.write(`${bug}: replayed on real processes ${replay.reproduced}/${REAL}\n`);
  }
}

const sec = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;
console.log(
  `\nkvraft switches: simulated campaigns (${TIME} caps, ${POLICIES.join(' then ')}, seeds 1–${SEEDS}) and real replays`,
);
console.log(
  '| switch | found in the simulator | campaigns run | finding | replayed in the simulator | replayed on real processes |',
);
console.log('| --- | --- | --- | --- | --- | --- |');
for (const bug of SWITCHES) {
  const result = saved.switches[bug];
  if (result === undefined) continue;
  const found = result.campaigns.find((c) => c.found);
  const where = found ? `${found.policy}, seed ${found.seed}, ${sec(found.atMs)}` : 'not found';
  const real = result.real ? `${result.real.reproduced}/${result.real.tries}` : found ? 'not run' : '—';
  const finding = found?.bug ? `${found.bug.kind}/${found.bug.name}` : '—';
  const sim = result.sim ? (result.sim.reproduced ? '1/1' : '0/1') : found ? 'not run' : '—';
  console.log(`| \`${bug}\` | ${where} | ${result.campaigns.length} | ${finding} | ${sim} | ${real} |`);
}
