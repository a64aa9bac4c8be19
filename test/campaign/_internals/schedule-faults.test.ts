import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { emitter } from '../../../src/campaign/_internals/emitter.js';
import type { LiveRun } from '../../../src/campaign/_internals/live-run.js';
import { runFixed } from '../../../src/campaign/_internals/run-fixed.js';
import { RunState } from '../../../src/campaign/_internals/run-state.js';
import { ScheduleFaults } from '../../../src/campaign/_internals/schedule-faults.js';
import { RunConfigSchema } from '../../../src/campaign/config.js';
import type { RunParts } from '../../../src/campaign/create-run.js';
import type { Reporter } from '../../../src/campaign/reporter.js';
import { readSchedule } from '../../../src/campaign/schedule-file.js';
import type { NodeStatus, StartOutcome } from '../../../src/cluster/cluster.js';
import type { Address } from '../../../src/cluster/net/backend.js';
import { Rng } from '../../../src/core/random.js';
import { Nemesis, type NemesisCluster } from '../../../src/nemesis/nemesis.js';
import { WorldClock } from '../../../src/sim/world-clock.js';
import { World } from '../../../src/sim/world.js';
import { RunStore } from '../../../src/store/run-store.js';
import type { KvClient, LaunchSpec, SystemAdapter } from '../../../src/systems/system.js';
import { History } from '../../../src/workload/history.js';

const NODES = ['n1', 'n2', 'n3'];
const ADDRESS: Address = { host: '127.0.0.1', port: 1 };
/** How far a test's world may run in virtual time before it fails (none comes near). */
const VIRTUAL_LIMIT_MS = 600_000;
const BUDGET_MS = 10_000;

const dir = mkdtempSync(join(tmpdir(), 'mallory-schedule-faults-'));
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** Three running members whose processes do what they are told at once. */
class Members implements NemesisCluster {
  readonly nodes = NODES;
  readonly runDir = dir;
  private readonly memberSet = new Set(NODES);
  private readonly status = new Map<string, NodeStatus>(NODES.map((n) => [n, 'running']));
  get members(): readonly string[] {
    return this.nodes.filter((n) => this.memberSet.has(n));
  }
  dataDir(node: string): string {
    return join(dir, node);
  }
  listen(): Address {
    return ADDRESS;
  }
  dial(): Address {
    return ADDRESS;
  }
  clientAddress(): Address {
    return ADDRESS;
  }
  statusOf(node: string): NodeStatus {
    return this.status.get(node) ?? 'exited';
  }
  nodesIn(...statuses: NodeStatus[]): string[] {
    return this.nodes.filter((n) => statuses.includes(this.statusOf(n)));
  }
  isMember(node: string): boolean {
    return this.memberSet.has(node);
  }
  setMember(node: string, member: boolean): void {
    if (member) this.memberSet.add(node);
    else this.memberSet.delete(node);
  }
  start(node: string): Promise<StartOutcome> {
    this.status.set(node, 'running');
    return Promise.resolve('started');
  }
  kill(node: string, as: NodeStatus = 'killed'): Promise<void> {
    this.status.set(node, as);
    return Promise.resolve();
  }
  pause(): void {
    // not used here
  }
  resume(): void {
    // not used here
  }
  wipe(): void {
    // not used here
  }
  waitReady(): Promise<boolean> {
    return Promise.resolve(true);
  }
}

/** A system whose membership removal never returns (a call stuck on a lost connection). */
function stuckRemoval(calls: string[]): SystemAdapter {
  return {
    name: 'stuck',
    services: ['client'],
    peerServices: [],
    crashPatterns: [],
    doctor: () => Promise.resolve([]),
    launch: (): LaunchSpec => ({ command: 'true', args: [] }),
    ready: () => Promise.resolve(true),
    client: (): KvClient => {
      throw new Error('no clients in this test');
    },
    membership: {
      remove: (node) => {
        calls.push(`remove ${node}`);
        return new Promise<void>(() => undefined);
      },
      add: () => Promise.resolve(),
      configuration: () => Promise.resolve(NODES),
    },
  };
}

function schedule(lines: object[]): ReturnType<typeof readSchedule> {
  const file = join(dir, `s${Math.random()}.jsonl`);
  writeFileSync(file, lines.map((l) => JSON.stringify(l)).join('\n'));
  return readSchedule(file);
}

describe('ScheduleFaults: the time budget bounds the faults', () => {
  it('a fault call that never returns is cut short at the budget: the schedule ends there and the history says :info, cut short', async () => {
    const world = new World({ seed: 1 });
    const clock = new WorldClock(world);
    const store = RunStore.create(join(dir, 'store'), {
      id: 'budget',
      system: 'stuck',
      seed: 1,
      policy: 'schedule',
      config: {},
    });
    const history = new History(
      clock.monoNs(),
      (op) => {
        store.appendOp(op);
      },
      clock,
    );
    const calls: string[] = [];
    const cluster = new Members();
    const nemesis = new Nemesis(
      cluster,
      { cut: () => Promise.resolve(), degrade: () => Promise.resolve(), heal: () => Promise.resolve() },
      stuckRemoval(calls),
      new Rng(1),
      ['member', 'kill'],
      { clock },
    );
    const faults: string[] = [];
    const reporter: Reporter = {
      fault: (outcome) => faults.push(`${outcome.fault.f} ${outcome.outcome}: ${outcome.error ?? ''}`),
    };
    const state = new RunState();
    state.startMs = clock.nowMs();
    const live = {
      config: RunConfigSchema.parse({
        system: 'kvraft',
        timeMs: BUDGET_MS,
        steps: 12,
        stepMs: 2_500,
        seed: 1,
      }),
      signal: new AbortController().signal,
      clock,
      emit: emitter([reporter]),
      state,
      store,
      history,
      parts: {
        cluster,
        nemesis,
        observation: { onEvent: () => () => undefined },
      } as unknown as RunParts,
    } as unknown as LiveRun;
    const budgetEnd = state.startMs + BUDGET_MS;
    const scheduled = new ScheduleFaults(live, 0, state.startMs, budgetEnd);
    const items = schedule([
      { atMs: 9_000, f: 'member-remove', value: ['n3'] },
      // Due within the budget, but queued behind the stuck removal until past it.
      { atMs: 9_500, f: 'kill', value: ['n1'] },
    ]);

    await world.settle(runFixed(live, items, scheduled, budgetEnd), VIRTUAL_LIMIT_MS);

    // The schedule ended at the budget itself, not when (if ever) the call returned.
    expect(clock.nowMs()).toBe(budgetEnd);
    expect(calls).toEqual(['remove n3']);
    const nemesisOps = history
      .takeSegment()
      .filter((op) => op.process === 'nemesis')
      .map(({ type, f, value, error }) => ({ type, f, value, ...(error !== undefined ? { error } : {}) }));
    expect(nemesisOps).toEqual([
      { type: 'info', f: 'member-remove', value: ['n3'] },
      {
        type: 'info',
        f: 'member-remove',
        value: ['n3'],
        error: 'cut short at the time budget (--time 10 s)',
      },
      {
        type: 'info',
        f: 'kill',
        value: ['n1'],
        error: 'skipped: past the time budget (--time)',
      },
    ]);
    // Never counted as a fault that took effect; the node it was removing is still a member, and
    // the next reset reconciles with the configuration.
    expect(scheduled.faults).toEqual([]);
    expect(state.faultCount).toBe(0);
    expect(faults).toEqual(['member-remove error: cut short at the time budget (--time 10 s)']);
    expect(cluster.isMember('n3')).toBe(true);
    expect(await world.settle(nemesis.healAll(), VIRTUAL_LIMIT_MS)).toEqual([]);
    expect(cluster.members).toEqual(NODES);
    store.close();
  });
});
