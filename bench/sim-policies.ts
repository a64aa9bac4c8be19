/**
 * Time to bug per policy in the simulator: `mallory run --sim --system kvraft --bug SWITCH --policy
 * P --seed S --stop-on-bug` for every switch, policy and seed (one process each, one at a time),
 * the virtual time of the first finding (a campaign that ends without one is censored at its end).
 * Prints per switch and policy: found/total, the Kaplan–Meier median time to bug, and against
 * `random` Â12 (the chance a campaign of the policy finds it sooner; a miss counts as later than
 * every find) and the two-sided Mann–Whitney p. Writes every campaign's outcome as JSON to OUT.
 *
 * `npx tsx bench/sim-policies.ts [switches=vote-reset-same-term,stale-read] [policies=random,adaptive]
 *  [seeds=30] [time=10m] [out=sim-policies.json]` (build first: `npm run build`)
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

import { a12, mannWhitneyU } from '../src/report/stats.js';
import { kaplanMeier, survivalMedianMs } from '../src/report/survival.js';

const [switchArg, policyArg, seedArg, timeArg, outArg] = process.argv.slice(2);
const SWITCHES = (switchArg ?? 'vote-reset-same-term,stale-read').split(',');
const POLICIES = (policyArg ?? 'random,adaptive').split(',');
const SEEDS = Number(seedArg ?? 30);
const TIME = timeArg ?? '10m';
const OUT = outArg ?? 'sim-policies.json';
const BIN = path.resolve(import.meta.dirname, '..', 'bin', 'mallory.js');

interface Outcome {
  readonly bug: string;
  readonly policy: string;
  readonly seed: number;
  readonly found: boolean;
  /** Virtual ms: the first finding's, else the campaign's end. */
  readonly atMs: number;
  readonly wallMs: number;
}

const earlier: Outcome[] = existsSync(OUT)
  ? (() => {
      const saved = JSON.parse(readFileSync(OUT, 'utf8')) as { time: string; outcomes: Outcome[] };
      return saved.time === TIME ? saved.outcomes : [];
    })()
  : [];
const outcomes: Outcome[] = [...earlier];
function save(): void {
  writeFileSync(OUT, JSON.stringify({ time: TIME, seeds: SEEDS, outcomes }, null, 2));
}
const store = mkdtempSync(path.join(tmpdir(), 'mallory-sim-policies-'));
try {
  for (const bug of SWITCHES)
    for (const policy of POLICIES)
      for (let seed = 1; seed <= SEEDS; seed++) {
        if (earlier.some((o) => o.bug === bug && o.policy === policy && o.seed === seed)) continue;
        const t0 = Date.now();
        const args = [BIN, 'run', '--sim', '--system', 'kvraft', '--bug', bug, '--policy', policy];
        args.push('--seed', String(seed), '--time', TIME, '--stop-on-bug', '--store', store, '--json');
        const r = spawnSync(process.execPath, args, { encoding: 'utf8', maxBuffer: 1 << 28 });
        const summary = JSON.parse(r.stdout) as { elapsedMs: number; bugs: { foundAtMs: number }[] };
        const first = Math.min(...summary.bugs.map((b) => b.foundAtMs));
        const found = summary.bugs.length > 0;
        outcomes.push({
          bug,
          policy,
          seed,
          found,
          atMs: found ? first : summary.elapsedMs,
          wallMs: Date.now() - t0,
        });
        save();
        rmSync(path.join(store, 'kvraft'), { recursive: true, force: true });
        process.stderr.write(
          `${bug} ${policy} seed ${seed}: ${found ? `found at ${(first / 1000).toFixed(1)} s` : 'not found'}\n`,
        );
      }
} finally {
  rmSync(store, { recursive: true, force: true });
}
save();

const s = (ms: number | null): string => (ms === null ? 'not reached' : `${(ms / 1000).toFixed(1)} s`);
for (const bug of SWITCHES) {
  console.log(`\n${bug} (${SEEDS} simulated campaigns per policy, ${TIME} caps)`);
  console.log('policy      found   median TTB     Â12 vs random   p (Mann–Whitney)');
  const times = (policy: string): number[] =>
    outcomes
      .filter((o) => o.bug === bug && o.policy === policy && o.seed <= SEEDS)
      .map((o) => (o.found ? o.atMs : Infinity));
  const base = times('random');
  for (const policy of POLICIES) {
    const mine = outcomes.filter((o) => o.bug === bug && o.policy === policy && o.seed <= SEEDS);
    const found = mine.filter((o) => o.found).length;
    const median = survivalMedianMs(kaplanMeier(mine.map((o) => ({ atMs: o.atMs, found: o.found }))));
    const vs =
      policy === 'random' || base.length === 0
        ? ''
        : (() => {
            const t = times(policy);
            const mw = mannWhitneyU(t, base);
            return `${a12(base, t).toFixed(2).padEnd(15)} ${mw.p.toFixed(3)} ${mw.method}`;
          })();
    console.log(`${policy.padEnd(11)} ${`${found}/${mine.length}`.padEnd(7)} ${s(median).padEnd(14)} ${vs}`);
  }
}
