/**
 * How deep each kvraft bug switch is: the share of seeded uniform-random fault schedules that find
 * its bug in a short simulated run. A stand-in for the campaign loop on the simulator (there is no
 * `mallory run --sim` yet): per seed, a simulated kvraft cluster (the production node code) with the
 * switch on, a register workload, and every step one fault action drawn uniformly among those that
 * can be enacted now — start or stop a partition (one node cut off, a minority split off, or one
 * direction of one link), kill or restart a node, pause or resume one, slow a random set of links or
 * stop, remove a member (killed and wiped) or add it back (restarted as a joiner). Found: a probe
 * invariant broken (two leaders in a term, a vote given twice, a node's assertion, …), or the
 * history, with a final read of every key after healing, not linearizable. `none` runs no switch:
 * it must find nothing (a finding there is a checker or simulator defect, not depth); `none-4` is
 * the same on 4 nodes (the cluster of `learner-vote-counted`).
 * A switch counts as deep when it is found in at most 20% of runs.
 *
 * `npx tsx bench/sim-random-depth.ts [runs=10] [virtual minutes=10] [bug,bug,…|deep|all]`
 */
import { checkInvariants } from '../src/check/invariants.js';
import { checkOps } from '../src/check/linearizable.js';
import type { Event } from '../src/core/event.js';
import type { Op } from '../src/core/op.js';
import type { Rng } from '../src/core/random.js';
import { runWorkload, type WorkloadOp } from '../src/sim/kvraft-workload.js';
import { SimKvraft } from '../src/sim/kvraft.js';
import { KVRAFT_BUG_NEEDS, KVRAFT_BUGS, type KvraftBug } from '../src/systems/kvraft/bugs.js';

const RUNS = Number(process.argv[2] ?? 10);
const VIRTUAL_MIN = Number(process.argv[3] ?? 10);
const DEEP: readonly KvraftBug[] = [
  'vote-reset-same-term',
  'lease-read-on-receipt',
  'read-index-before-term-commit',
  'learner-vote-counted',
  'stale-vote-reply-counted',
  'ack-overwritten-entry',
];
const WHICH = process.argv[4] ?? 'deep';
const BUGS: readonly (KvraftBug | 'none' | 'none-4')[] =
  WHICH === 'deep'
    ? ['none', ...DEEP]
    : WHICH === 'all'
      ? [
          'none',
          ...KVRAFT_BUGS.filter(
            (b) => KVRAFT_BUG_NEEDS[b].workload === 'register' && b !== 'ack-before-fsync',
          ),
        ]
      : (WHICH.split(',') as (KvraftBug | 'none' | 'none-4')[]);

/** One fault action per step, as a campaign's steps of 2.5 s. */
const STEP_MS = 2500;
const CLIENTS = 3;
/** Pause between a client's operations, uniform in [0, gap]. */
const GAP_MS = 50;
const KEYS = 3;
/** Added delay of a slowed link, uniform in [min, max] ms. */
const DELAY_MS: readonly [number, number] = [10, 500];
const ADMIN_TIMEOUT_MS = 3000;
const CHECK_LIMIT_MS = 30_000;
const FINAL_READ_MS = 1000;
const SETTLE_MS = 5000;

type Action = () => Promise<void> | void;

interface Found {
  readonly found: boolean;
  readonly unknown: boolean;
  readonly what: string;
  readonly faults: number;
  /** Client operations that completed ok. */
  readonly ops: number;
}

/** The random nemesis: what is broken now, and the actions that can be enacted from here. */
class Nemesis {
  private partitioned = false;
  private slowed = false;
  private readonly down = new Set<string>();
  private readonly paused = new Set<string>();
  private readonly removed = new Set<string>();
  private readonly joiners = new Set<string>();
  enacted = 0;

  constructor(
    private readonly sim: SimKvraft,
    private readonly rng: Rng,
    private readonly bugs: readonly KvraftBug[],
  ) {}

  private up(): string[] {
    return this.sim.nodes.filter((n) => !this.down.has(n) && !this.removed.has(n));
  }

  private leader(): string | undefined {
    return this.sim.nodes.find((n) => !this.paused.has(n) && this.sim.statusNow(n)?.role === 'leader');
  }

  private start(node: string): void {
    this.sim.start(node, { bugs: this.bugs, join: this.joiners.has(node) });
  }

  /** Every action that can be enacted now, by family. */
  private actions(): Action[] {
    const { sim, rng } = this;
    const nodes = sim.nodes;
    const running = this.up().filter((n) => !this.paused.has(n));
    const list: Action[] = [];
    // partition
    if (!this.partitioned) {
      list.push(() => {
        const shape = rng.int(3);
        if (shape === 0) sim.isolate(rng.pick(nodes));
        else if (shape === 1) {
          const size = 1 + rng.int(Math.max(1, Math.floor((nodes.length - 1) / 2)));
          const minority = [...nodes].sort(() => rng.next() - 0.5).slice(0, size);
          for (const n of minority)
            sim.isolate(
              n,
              nodes.filter((m) => !minority.includes(m)),
            );
        } else {
          const from = rng.pick(nodes);
          sim.isolate(from, [rng.pick(nodes.filter((n) => n !== from))], false);
        }
        this.partitioned = true;
      });
    } else
      list.push(() => {
        sim.heal();
        this.partitioned = false;
      });
    // kill
    if (running.length > 0)
      list.push(() => {
        const node = rng.pick(running);
        sim.kill(node);
        this.down.add(node);
      });
    const restartable = [...this.down];
    if (restartable.length > 0)
      list.push(() => {
        const node = rng.pick(restartable);
        this.down.delete(node);
        this.start(node);
      });
    // pause
    if (running.length > 0)
      list.push(() => {
        const node = rng.pick(running);
        sim.world.pause(node);
        this.paused.add(node);
      });
    if (this.paused.size > 0)
      list.push(() => {
        const node = rng.pick([...this.paused]);
        this.paused.delete(node);
        sim.world.resume(node);
      });
    // packet
    if (!this.slowed)
      list.push(() => {
        const links = nodes.flatMap((a) =>
          nodes.filter((b) => b !== a && rng.next() < 0.5).map((b) => [a, b] as const),
        );
        sim.delay(DELAY_MS[0] + rng.next() * (DELAY_MS[1] - DELAY_MS[0]), links);
        this.slowed = true;
      });
    else
      list.push(() => {
        sim.delay(0, []);
        this.slowed = false;
      });
    // member
    const leader = this.leader();
    const members = this.up().filter((n) => !this.paused.has(n));
    if (leader !== undefined && this.removed.size === 0 && members.length > 2)
      list.push(async () => {
        const node = rng.pick(nodes.filter((n) => !this.removed.has(n)));
        const response = await sim.requestLater(leader, { op: 'remove-member', node }, ADMIN_TIMEOUT_MS);
        if (!('ok' in response) || !response.ok) return;
        if (!this.down.has(node)) sim.kill(node);
        this.down.delete(node);
        this.paused.delete(node);
        sim.world.wipeDisk(node);
        this.removed.add(node);
      });
    if (leader !== undefined && this.removed.size > 0)
      list.push(async () => {
        const node = rng.pick([...this.removed]);
        this.removed.delete(node);
        this.joiners.add(node);
        this.start(node);
        await sim.requestLater(leader, { op: 'add-member', node }, ADMIN_TIMEOUT_MS);
      });
    return list;
  }

  async run(endMs: number): Promise<void> {
    while (this.sim.world.nowMs + STEP_MS < endMs) {
      await this.sim.sleep(STEP_MS);
      const actions = this.actions();
      this.enacted++;
      await this.rng.pick(actions)();
    }
  }

  /** Undoes every fault, so the final reads can reach a leader. */
  async heal(): Promise<void> {
    this.sim.heal();
    this.sim.delay(0, []);
    for (const node of this.paused) this.sim.world.resume(node);
    this.paused.clear();
    for (const node of this.down) this.start(node);
    this.down.clear();
    const leader = this.leader() ?? this.sim.nodes[0];
    for (const node of this.removed) {
      this.joiners.add(node);
      this.start(node);
      await this.sim.requestLater(leader, { op: 'add-member', node }, ADMIN_TIMEOUT_MS);
    }
    this.removed.clear();
  }
}

function toOps(history: readonly WorkloadOp[]): Op[] {
  const events: { time: number; op: Omit<Op, 'index'> }[] = [];
  for (const h of history) {
    const value =
      h.f === 'read'
        ? [h.key, null]
        : h.f === 'write'
          ? [h.key, h.value]
          : [h.key, [(h.value ?? 0) - 1, h.value]];
    events.push({
      time: h.startMs,
      op: { time: Math.round(h.startMs * 1e6), type: 'invoke', process: h.client, f: h.f, value },
    });
    const r = h.result;
    const done = r.type === 'ok' && h.f === 'read' ? [h.key, r.value ?? null] : value;
    events.push({
      time: h.endMs,
      op: { time: Math.round(h.endMs * 1e6), type: r.type, process: h.client, f: h.f, value: done },
    });
  }
  events.sort((a, b) => a.time - b.time);
  return events.map((e, index) => ({ ...e.op, index }));
}

async function once(bug: KvraftBug | 'none' | 'none-4', seed: number): Promise<Found> {
  const bugs: KvraftBug[] = bug === 'none' || bug === 'none-4' ? [] : [bug];
  const nodes = bug === 'none' ? 3 : bug === 'none-4' ? 4 : KVRAFT_BUG_NEEDS[bug].nodes;
  const sim = new SimKvraft({ seed, nodes, node: { bugs } });
  sim.startAll();
  await sim.waitLeader();
  const nemesis = new Nemesis(sim, sim.world.rng.fork('random-nemesis'), bugs);
  const durationMs = VIRTUAL_MIN * 60_000;
  const faults = nemesis.run(sim.world.nowMs + durationMs);
  const history = await runWorkload(sim, {
    durationMs,
    clients: CLIENTS,
    gapMs: GAP_MS,
    keys: KEYS,
    faultEveryMs: 0,
  });
  await sim.world.settle(faults, SETTLE_MS * 4);
  await sim.world.settle(nemesis.heal(), SETTLE_MS * 4);
  await sim.world.run(SETTLE_MS);
  // Final reads, as a campaign's reset does: every key, through whoever leads.
  const lastClient = CLIENTS;
  for (let k = 0; k < KEYS; k++) {
    const leader = sim.nodes.find((n) => sim.statusNow(n)?.role === 'leader');
    if (leader === undefined) break;
    const key = `k${k}`;
    const startMs = sim.world.nowMs;
    const result = await sim.read(leader, key, FINAL_READ_MS);
    history.push({
      client: lastClient,
      startMs,
      endMs: sim.world.nowMs,
      f: 'read',
      key,
      value: null,
      result,
    });
  }
  const events: Event[] = sim.events().map((e) => ({
    ts: Math.round(e.timeMs * 1e6),
    node: e.node,
    source: 'probe',
    type: e.type,
    ...(e.attrs ? { attrs: e.attrs } : {}),
  }));
  const ops = history.filter((h) => h.result.type === 'ok').length;
  const violations = checkInvariants(events);
  if (violations.length > 0)
    return { found: true, unknown: false, what: violations[0].name, faults: nemesis.enacted, ops };
  const crashed = sim.nodes.find((n) => sim.output(n).includes('ASSERTION FAILED'));
  if (crashed) return { found: true, unknown: false, what: 'assertion', faults: nemesis.enacted, ops };
  const result = await checkOps(toOps(history), { model: 'kv', timeLimitMs: CHECK_LIMIT_MS });
  if (result.valid === false)
    return { found: true, unknown: false, what: 'linearizability', faults: nemesis.enacted, ops };
  return { found: false, unknown: result.valid === 'unknown', what: '', faults: nemesis.enacted, ops };
}

console.log(
  `random fault schedules on the simulated kvraft: ${RUNS} seeds × ${VIRTUAL_MIN} virtual min, ` +
    `one action every ${STEP_MS / 1000} s among partition, kill, pause, packet, member`,
);
for (const bug of BUGS) {
  let found = 0;
  let unknown = 0;
  const what = new Map<string, number>();
  const started = performance.now();
  for (let seed = 1; seed <= RUNS; seed++) {
    const r = await once(bug, seed);
    if (r.found) {
      found++;
      what.set(r.what, (what.get(r.what) ?? 0) + 1);
    }
    if (r.unknown) unknown++;
    process.stderr.write(
      `${bug} seed ${seed}: ${r.found ? `found (${r.what})` : 'not found'}, ${r.faults} actions, ${r.ops} ops\n`,
    );
  }
  const share = found / RUNS;
  const verdict = bug.startsWith('none') ? '' : share <= 0.2 ? '  deep' : '  shallow';
  console.log(
    `${bug.padEnd(30)} found ${found}/${RUNS}${verdict}` +
      `  ${[...what].map(([w, c]) => `${w} ×${c}`).join(', ')}` +
      (unknown > 0 ? `  (check gave up on ${unknown})` : '') +
      `  ${((performance.now() - started) / 1000 / RUNS).toFixed(0)} s/run`,
  );
}
