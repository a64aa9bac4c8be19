// Whether sharing pays: pairs of campaigns run two at a time, the two of a pair sharing what they
// learn through an exchange directory (`adaptive+exchange`) or not (`adaptive`), same system,
// budget and seeds. Per pair: the distinct states of the two together (a state both reached
// counts once) and the time to the pair's first finding; then Â12 and the Mann–Whitney p of
// sharing against not sharing. Each pair is a plan of its own, run by `mallory fleet run
// --workers 2`, so the two campaigns of a pair run at once and share only with each other.
// Run: npx tsx bench/exchange.ts [system=kvraft] [time=4m] [pairs=3] [seed=1] [bug=NONE] [store=tmp]
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

import { a12, mannWhitneyU, mean } from '../src/report/stats.js';

const REPO = resolve(import.meta.dirname, '..');
const BIN = join(REPO, 'bin', 'mallory.js');
const SYSTEM = process.argv[2] ?? 'kvraft';
const TIME = process.argv[3] ?? '4m';
const PAIRS = Number(process.argv[4] ?? '3');
const SEED = Number(process.argv[5] ?? '1');
const BUG = process.argv[6] !== undefined && process.argv[6] !== 'NONE' ? process.argv[6] : undefined;
const KEEP = process.argv[7];
const SIDES = ['adaptive+exchange', 'adaptive'] as const;

interface Report {
  readonly timeMs: number;
  readonly groups: readonly {
    readonly unionStates: Readonly<Record<string, number>>;
    readonly comparison?: {
      readonly policies: Record<
        string,
        { readonly runs: readonly { metrics: Record<string, number>; runDir: string }[] }
      >;
    };
  }[];
  readonly findings: readonly { readonly first: { readonly foundAtMs: number } }[];
}

function mallory(args: readonly string[], store: string): string {
  const r = spawnSync(process.execPath, [BIN, ...args], {
    cwd: REPO,
    encoding: 'utf8',
    env: { ...process.env, MALLORY_STATE_DIR: join(store, 'state') },
  });
  if (r.status !== 0)
    throw new Error(
      `mallory ${args.join(' ')}: exit ${r.status}: ${r.stderr.trim().split('\n').at(-1) ?? ''}`,
    );
  return r.stdout;
}

function imports(runDir: string): number {
  const file = join(runDir, 'exchange.jsonl');
  return existsSync(file) ? readFileSync(file, 'utf8').trim().split('\n').length : 0;
}

const store = KEEP ?? mkdtempSync(join(tmpdir(), 'mallory-exchange-bench-'));
const rows: Record<
  (typeof SIDES)[number],
  { union: number[]; firstMs: number[]; runStates: number[]; imports: number[] }
> = {
  'adaptive+exchange': { union: [], firstMs: [], runStates: [], imports: [] },
  adaptive: { union: [], firstMs: [], runStates: [], imports: [] },
};
console.log(
  `sharing against not: ${SYSTEM}${BUG ? ` --bug ${BUG}` : ''}, ${PAIRS} pairs of ${TIME} campaigns run two at a time, seeds from ${SEED}`,
);
console.log('side                pair  seeds    states of the pair  states of each  first finding  imports');
try {
  for (let p = 0; p < PAIRS; p++) {
    const seed = SEED + 2 * p;
    for (const side of SIDES) {
      const id = `${side.replace('+', '-')}-${seed}`;
      const plan = join(store, 'plans', id, 'plan.json');
      mallory(
        [
          'plan',
          '--system',
          SYSTEM,
          '--policies',
          side,
          '--seeds',
          '2',
          '--seed',
          String(seed),
          '--time',
          TIME,
          '--store',
          store,
          '--id',
          id,
          ...(BUG ? ['--bug', BUG] : []),
        ],
        store,
      );
      mallory(['fleet', 'run', plan, '--workers', '2'], store);
      const report = JSON.parse(mallory(['fleet', 'report', plan, '--json'], store)) as Report;
      const group = report.groups[0];
      const runs = group.comparison?.policies[side]?.runs ?? [];
      const union = group.unionStates.causal ?? 0;
      const first =
        report.findings.length === 0 ? null : Math.min(...report.findings.map((f) => f.first.foundAtMs));
      const each = runs.map((r) => r.metrics.states_causal ?? 0);
      const took = runs.map((r) => imports(r.runDir));
      rows[side].union.push(union);
      // A pair that found nothing counts as finding just past the budget.
      rows[side].firstMs.push(first ?? report.timeMs + 1);
      rows[side].runStates.push(...each);
      rows[side].imports.push(...took);
      console.log(
        `${side.padEnd(19)} ${String(p + 1).padStart(4)}  ${`${seed},${seed + 1}`.padEnd(7)}  ${String(union).padStart(18)}  ${each.join(' + ').padStart(14)}  ${(first === null ? 'none' : `${(first / 1000).toFixed(1)} s`).padStart(13)}  ${took.join(' + ').padStart(7)}`,
      );
    }
  }
  const [shared, alone] = [rows['adaptive+exchange'], rows.adaptive];
  const line = (
    what: string,
    xs: number[],
    ys: number[],
    fmt: (n: number) => string,
    sooner = false,
  ): void => {
    const a = sooner ? a12(ys, xs) : a12(xs, ys);
    const p = xs.length > 1 && ys.length > 1 ? mannWhitneyU(xs, ys).p : NaN;
    console.log(
      `${what.padEnd(40)} ${fmt(mean(xs)).padStart(10)} ${fmt(mean(ys)).padStart(10)}  Â12 ${a.toFixed(2)}  p ${p.toFixed(3)}`,
    );
  };
  console.log('');
  console.log(`${''.padEnd(40)} ${'sharing'.padStart(10)} ${'alone'.padStart(10)}`);
  line('distinct states of a pair (mean)', shared.union, alone.union, (n) => n.toFixed(1));
  line('distinct states of one campaign (mean)', shared.runStates, alone.runStates, (n) => n.toFixed(1));
  line(
    'time to the first finding of a pair (s)',
    shared.firstMs,
    alone.firstMs,
    (n) => (n / 1000).toFixed(1),
    true,
  );
  console.log(
    '(Â12 of time: the chance sharing finds it sooner; a pair that found nothing counts as just past the budget)',
  );
} finally {
  if (KEEP === undefined) rmSync(store, { recursive: true, force: true });
}
