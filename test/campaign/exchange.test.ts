import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import { StateClusters } from '../../src/abstraction/clusters.js';
import { Coverage } from '../../src/abstraction/coverage.js';
import {
  Exchange,
  EXCHANGE_LOG,
  type ExchangeSnapshot,
  MAX_SNAPSHOT_BYTES,
  prepareExchangeDir,
} from '../../src/campaign/exchange.js';
import { UsageError } from '../../src/core/errors.js';
import { Drain } from '../../src/observe/drain.js';
import { AdaptivePolicy } from '../../src/policy/adaptive.js';
import { CorpusPolicy } from '../../src/policy/corpus.js';
import type { Policy, PolicyValue } from '../../src/policy/policy.js';
import { Rng } from '../../src/core/random.js';
import { SPACE } from '../policy/_helpers/space.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function temp(): string {
  const d = mkdtempSync(join(tmpdir(), 'mallory-exchange-'));
  dirs.push(d);
  return d;
}

type States = ExchangeSnapshot['states'];

interface Worker {
  readonly exchange: Exchange;
  readonly policy: Policy;
  readonly coverage: Coverage;
  readonly drain: Drain;
  readonly runDir: string;
  states: States;
}

function worker(
  dir: string,
  runId: string,
  options: {
    system?: string;
    lines?: readonly string[];
    policy?: () => Policy;
    warn?: (line: string) => void;
  } = {},
): Worker {
  const runDir = temp();
  const policy = options.policy?.() ?? new AdaptivePolicy();
  const coverage = new Coverage();
  const drain = new Drain();
  for (const line of options.lines ?? []) drain.add(line);
  const w: Worker = {
    policy,
    coverage,
    drain,
    runDir,
    states: [],
    exchange: undefined as unknown as Exchange,
  };
  const exchange = new Exchange({
    dir,
    runDir,
    runId,
    system: options.system ?? 'kvraft',
    policy,
    policyAbstraction: 'causal',
    coverage,
    drain,
    ownStates: () => w.states,
    ...(options.warn !== undefined ? { warn: options.warn } : {}),
  });
  return Object.assign(w, { exchange });
}

function row(values: readonly PolicyValue[], state: string, action: string): PolicyValue | undefined {
  return values.find((v) => v.state === state && v.action === action);
}

function imports(w: Worker): Record<string, unknown>[] {
  return readFileSync(join(w.runDir, EXCHANGE_LOG), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe('Exchange', () => {
  it('merges another campaign’s values by visits, and publishes only what this one learned itself', () => {
    const dir = temp();
    const a = worker(dir, 'a');
    const b = worker(dir, 'b');
    a.policy.load([{ state: 's1', action: 'kill:one', value: 0, visits: 3 }]);
    b.policy.load([{ state: 's1', action: 'kill:one', value: 1, visits: 1 }]);

    a.exchange.publish(1);
    const took = b.exchange.pull(1);

    expect(took).toHaveLength(1);
    expect(took[0]).toMatchObject({
      from: a.exchange.worker,
      runDir: a.runDir,
      values: 1,
      visits: 3,
      schedule: 1,
    });
    expect(row(b.policy.save(), 's1', 'kill:one')).toEqual({
      state: 's1',
      action: 'kill:one',
      value: 0.25,
      visits: 4,
    });
    expect(imports(b)).toEqual([expect.objectContaining({ from: a.exchange.worker, values: 1, visits: 3 })]);

    // Nothing new published: nothing taken twice.
    expect(b.exchange.pull(2)).toEqual([]);

    // What b publishes is its own visit, not a's three again (no echo back to a).
    b.exchange.publish(1);
    const back = a.exchange.pull(2);
    expect(back[0]).toMatchObject({ values: 1, visits: 1 });
    expect(row(a.policy.save(), 's1', 'kill:one')).toEqual({
      state: 's1',
      action: 'kill:one',
      value: 0.0625,
      visits: 4,
    });
  });

  it('takes only the visits made since it last took from the same campaign', () => {
    const dir = temp();
    const a = worker(dir, 'a');
    const b = worker(dir, 'b');
    a.policy.load([{ state: 's1', action: 'pause:leader', value: 2, visits: 2 }]);
    a.exchange.publish(1);
    b.exchange.pull(1);
    expect(row(b.policy.save(), 's1', 'pause:leader')).toMatchObject({ value: 2, visits: 2 });

    a.policy.load([{ state: 's1', action: 'pause:leader', value: 4, visits: 5 }]);
    a.exchange.publish(2);
    const took = b.exchange.pull(2);

    expect(took[0]).toMatchObject({ values: 1, visits: 3 });
    // (2·2 + 4·3) / 5
    expect(row(b.policy.save(), 's1', 'pause:leader')).toMatchObject({ value: 3.2, visits: 5 });
  });

  it('names log templates by text: another campaign’s state and values land on this campaign’s ids', () => {
    const dir = temp();
    // a mined "x y" first, so its "became leader" is L2; b has only "became leader", as L1.
    const a = worker(dir, 'a', { lines: ['x y', 'became leader'] });
    const b = worker(dir, 'b', { lines: ['became leader'] });
    expect(a.drain.adopt(['became', 'leader'])).toBe('L2');
    expect(b.drain.adopt(['became', 'leader'])).toBe('L1');
    const theirs = ['n:L2', 'p:L2 > L1'];
    const stateA = new StateClusters().assign([...theirs].sort());
    a.states = [{ abstraction: 'causal', id: stateA, features: theirs, visits: 4 }];
    a.policy.load([{ state: stateA, action: 'start-partition:halves', value: 0.5, visits: 4 }]);

    a.exchange.publish(1);
    const took = b.exchange.pull(1);

    // b did not have "x y": adopted as its L2.
    expect(b.drain.templates().map((t) => t.tokens.join(' '))).toEqual(['became leader', 'x y']);
    expect(took[0]).toMatchObject({ states: 1, templates: 1, values: 1, visits: 4 });
    const ours = new StateClusters().assign(['n:L1', 'p:L1 > L2']);
    expect(ours).not.toBe(stateA);
    expect(row(b.policy.save(), ours, 'start-partition:halves')).toMatchObject({ value: 0.5, visits: 4 });
    // The state counts as seen here: b's abstraction gives the same features the same id.
    expect(b.coverage.seed('causal', 'unused', ['n:L1', 'p:L1 > L2'], 0)).toBe(ours);
  });

  it('shares the fault sequences a corpus policy kept, each once', () => {
    const dir = temp();
    const corpus = new CorpusPolicy({ replayEvery: 0 });
    const theirs = new CorpusPolicy({ replayEvery: 0 });
    const a = worker(dir, 'a', { policy: () => corpus });
    const b = worker(dir, 'b', { policy: () => theirs });
    // a keeps a sequence of its own: one schedule of one step whose window was new.
    const rng = new Rng(1);
    corpus.resetEpisode();
    const ctx = { state: undefined, space: SPACE, rng, schedule: 0, step: 0 };
    const fault = corpus.decide(ctx);
    const armed = corpus.arm({ ...ctx, eventTypes: [], enacted: fault });
    corpus.learn({ state: undefined, action: fault, next: 's', seenBefore: 0, armed, fired: false });
    corpus.resetEpisode();
    expect(corpus.sequences()).toHaveLength(1);

    a.exchange.publish(1);
    const took = b.exchange.pull(1);

    expect(took[0]).toMatchObject({ sequences: 1 });
    expect(theirs.corpus).toHaveLength(1);
    // Published again with nothing new: nothing is taken, and nothing recorded.
    a.exchange.publish(2);
    expect(b.exchange.pull(2)).toEqual([]);
    expect(imports(b)).toHaveLength(1);
  });

  it('ignores campaigns of another system or policy, its own file, and files it cannot read', () => {
    const dir = temp();
    const a = worker(dir, 'a', { system: 'etcd' });
    const b = worker(dir, 'b');
    a.policy.load([{ state: 's', action: 'kill:one', value: 1, visits: 1 }]);
    a.exchange.publish(1);
    b.exchange.publish(1);
    writeFileSync(join(dir, 'torn.json'), '{"format":');

    expect(b.exchange.pull(1)).toEqual([]);
    expect(readdirSync(b.runDir)).toEqual([]);
    expect(row(b.policy.save(), 's', 'kill:one')).toBeUndefined();
  });
});

/** A directory this process cannot write: a read-only bind mount for root, else one without w. */
function readOnlyDir(): { dir: string; dispose: () => void } {
  const dir = temp();
  if (process.getuid?.() !== 0) {
    chmodSync(dir, 0o555);
    return {
      dir,
      dispose: () => {
        chmodSync(dir, 0o755);
      },
    };
  }
  execFileSync('mount', ['--bind', dir, dir]);
  execFileSync('mount', ['-o', 'remount,bind,ro', dir]);
  return { dir, dispose: () => execFileSync('umount', [dir]) };
}

describe('the exchange directory', () => {
  it('skips what is not a regular file of bounded size, with a warning each, and still takes the rest', () => {
    const dir = temp();
    const warnings: string[] = [];
    const a = worker(dir, 'a');
    const b = worker(dir, 'b', { warn: (line) => warnings.push(line) });
    a.policy.load([{ state: 's', action: 'kill:one', value: 1, visits: 3 }]);
    a.exchange.publish(1);
    // Before, each of these was read whole: /dev/zero until memory ran out, a FIFO forever.
    symlinkSync('/dev/zero', join(dir, 'zero.json'));
    execFileSync('mkfifo', [join(dir, 'fifo.json')]);
    writeFileSync(join(dir, 'huge.json'), '');
    truncateSync(join(dir, 'huge.json'), MAX_SNAPSHOT_BYTES + 1);
    mkdirSync(join(dir, 'dir.json'));
    writeFileSync(
      join(dir, 'shapeless.json'),
      JSON.stringify({ format: 'mallory-exchange', system: 'kvraft', policy: 'adaptive', worker: 'x' }),
    );

    const took = b.exchange.pull(1);

    expect(took.map((t) => t.from)).toEqual([a.exchange.worker]);
    expect(row(b.policy.save(), 's', 'kill:one')?.visits).toBe(3);
    expect(warnings.sort()).toEqual([
      `exchange: skipped ${join(dir, 'dir.json')}: not a regular file`,
      `exchange: skipped ${join(dir, 'fifo.json')}: not a regular file`,
      `exchange: skipped ${join(dir, 'huge.json')}: larger than ${MAX_SNAPSHOT_BYTES} bytes`,
      `exchange: skipped ${join(dir, 'shapeless.json')}: not a whole snapshot`,
      `exchange: skipped ${join(dir, 'zero.json')}: cannot open it (ELOOP)`,
    ]);
    // Said once: the next look skips them quietly.
    b.exchange.pull(2);
    expect(warnings).toHaveLength(5);
  });

  it('is refused before the run makes anything when it is a file, cannot be made, or cannot be written', () => {
    const file = join(temp(), 'a-file');
    writeFileSync(file, '');
    expect(() => {
      prepareExchangeDir(file);
    }).toThrow(UsageError);
    expect(() => {
      prepareExchangeDir(file);
    }).toThrow(`--exchange ${file}: ${file} is not a directory`);
    // Node's own recursive mkdir spins forever here.
    expect(() => {
      prepareExchangeDir('/proc/x/y');
    }).toThrow(/^--exchange \/proc\/x\/y: cannot create \/proc\/x \(ENOENT\)/);
    const ro = readOnlyDir();
    try {
      expect(() => {
        prepareExchangeDir(ro.dir);
      }).toThrow(
        new RegExp(`^--exchange ${ro.dir}: cannot write there \\((EROFS|EACCES)\\): give a directory`),
      );
      expect(readdirSync(ro.dir)).toEqual([]);
    } finally {
      ro.dispose();
    }
    const fine = join(temp(), 'made', 'here');
    prepareExchangeDir(fine);
    expect(readdirSync(fine)).toEqual([]);
  });

  it('that cannot be written any more costs the campaign its publishing, said once, not the campaign', () => {
    const dir = temp();
    const warnings: string[] = [];
    const a = worker(dir, 'a', { warn: (line) => warnings.push(line) });
    a.exchange.publish(1);
    rmSync(dir, { recursive: true });
    writeFileSync(dir, 'now a file');

    a.exchange.publish(2);
    a.exchange.publish(3);
    expect(a.exchange.pull(3)).toEqual([]);

    expect(warnings[0]).toMatch(
      /^exchange: cannot publish to .* \(ENOTDIR\): the other campaigns do not get/,
    );
    expect(warnings.filter((w) => w.includes('cannot publish'))).toHaveLength(1);
    rmSync(dir);
    mkdirSync(dir);
    a.exchange.publish(4);
    expect(readdirSync(dir).filter((f) => f.endsWith('.json'))).toHaveLength(1);
  });
});
