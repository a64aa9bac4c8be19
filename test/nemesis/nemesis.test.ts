import { describe, expect, it, vi } from 'vitest';

import type { NodeStatus, StartOutcome } from '../../src/cluster/cluster.js';
import type { Address } from '../../src/cluster/net/backend.js';
import { HarnessError } from '../../src/core/errors.js';
import type { FaultKind, TornGranularity } from '../../src/core/fault.js';
import { BudgetReached } from '../../src/core/fault-call.js';
import { Rng } from '../../src/core/random.js';
import { CRASH_REPORT_MAX_MS, INDUCED_EXIT_GRACE_MS, NodeDisks } from '../../src/nemesis/disk.js';
import { Nemesis, type NemesisCluster, unsupportedFault } from '../../src/nemesis/nemesis.js';
import { createPolicy } from '../../src/policy/index.js';
import { WorldClock } from '../../src/sim/world-clock.js';
import { World } from '../../src/sim/world.js';
import type { ClusterView, KvClient, LaunchSpec, SystemAdapter } from '../../src/systems/system.js';

const NODES = ['n1', 'n2', 'n3'];
const ADDRESS: Address = { host: '127.0.0.1', port: 1 };

/**
 * A cluster of fake processes with a fake Raft-like configuration: a change commits only while a
 * majority of the committed members runs, and a joiner started before its add committed is
 * refused (as etcd refuses it).
 */
class FakeCluster implements NemesisCluster {
  readonly nodes = NODES;
  readonly runDir = '/nonexistent';
  readonly log: string[] = [];
  readonly committed = new Set(NODES);
  readonly refused: string[] = [];
  /** No member answers for the configuration until the cluster has been waited on (an election after restarts). */
  electing = false;
  private readonly memberSet = new Set(NODES);
  private readonly status = new Map<string, NodeStatus>(NODES.map((n) => [n, 'running']));

  get members(): readonly string[] {
    return this.nodes.filter((n) => this.memberSet.has(n));
  }
  hasQuorum(): boolean {
    const up = [...this.committed].filter((n) => this.status.get(n) === 'running');
    return up.length * 2 > this.committed.size;
  }
  dataDir(node: string): string {
    return `/nonexistent/${node}`;
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
    if (this.statusOf(node) === 'running' || this.statusOf(node) === 'paused') return Promise.resolve('up');
    this.log.push(`start ${node}`);
    if (!this.committed.has(node)) this.refused.push(node);
    this.status.set(node, 'running');
    return Promise.resolve('started');
  }
  kill(node: string, as: NodeStatus = 'killed'): Promise<void> {
    this.status.set(node, as);
    return Promise.resolve();
  }
  pause(node: string): void {
    if (this.statusOf(node) !== 'running') return;
    this.log.push(`pause ${node}`);
    this.status.set(node, 'paused');
  }
  resume(node: string): void {
    if (this.statusOf(node) !== 'paused') return;
    this.log.push(`resume ${node}`);
    this.status.set(node, 'running');
  }
  wipe(node: string): void {
    this.log.push(`wipe ${node}`);
  }
  waitReady(): Promise<boolean> {
    this.electing = false;
    return Promise.resolve(this.hasQuorum());
  }
}

interface FakeSystemOptions {
  /** The add commits but its call fails anyway (a timeout after the commit). */
  readonly addFailsAfterCommit?: boolean;
  /** The cluster turns every add down. */
  readonly addRejected?: boolean;
  /** After a failed add, this many configuration reads get no answer (the cluster busy with it). */
  readonly silentReadsAfterFailedAdd?: number;
  /** The adapter says its changes commit through a majority (`membership.quorum`). */
  readonly quorum?: boolean;
  /** After an add commits, this many configuration reads do not list the joiner yet (its join under way). */
  readonly joinListedAfterReads?: number;
  /** A removal's call fails ("lost leadership") before the change commits; the test commits it later. */
  readonly removeFailsUncommitted?: boolean;
  /**
   * A removal's call fails with the change still pending; it commits this long after the next
   * configuration read that does answer (the committed configuration still lists the node until then).
   */
  readonly removeCommitsLateMs?: number;
  /** A removal's call never returns (it is told where to stop by its signal, and ignores it). */
  readonly removeNeverReturns?: (signal: AbortSignal | undefined) => void;
  /** The configuration answers with n3 and without it in turn: it never answers the same twice. */
  readonly configurationFlaps?: boolean;
}

/** Mallory's own failure (as when its registry cannot be written) at the next start of a node. */
class FailingStart extends FakeCluster {
  override start(node: string): Promise<StartOutcome> {
    this.log.push(`start ${node}`);
    return Promise.reject(new HarnessError(`cannot record ${node}`));
  }
}

function fakeSystem(fake: FakeCluster, options: FakeSystemOptions = {}): SystemAdapter {
  const noQuorum = (): Error => new Error('no quorum');
  let silent = 0;
  const joining = new Map<string, number>();
  let pendingRemoval: string | undefined;
  let flapped = false;
  return {
    name: 'fake',
    services: ['client'],
    peerServices: [],
    crashPatterns: [],
    doctor: () => Promise.resolve([]),
    launch: (): LaunchSpec => ({ command: 'true', args: [] }),
    ready: () => Promise.resolve(fake.hasQuorum()),
    client: (): KvClient => {
      throw new Error('no clients in this test');
    },
    membership: {
      ...(options.quorum ? { quorum: true } : {}),
      remove(node: string, _cluster: ClusterView, signal?: AbortSignal): Promise<void> {
        if (!fake.hasQuorum()) return Promise.reject(noQuorum());
        if (options.removeNeverReturns) {
          fake.log.push(`remove ${node} (never returns)`);
          options.removeNeverReturns(signal);
          return new Promise<void>(() => undefined);
        }
        if (options.removeFailsUncommitted) return Promise.reject(new Error('server has lost leadership'));
        if (options.removeCommitsLateMs !== undefined) {
          pendingRemoval = node;
          return Promise.reject(new Error('server has lost leadership'));
        }
        fake.log.push(`remove ${node}`);
        fake.committed.delete(node);
        return Promise.resolve();
      },
      add(node: string): Promise<void> {
        fake.log.push(`add ${node}`);
        if (!fake.hasQuorum()) return Promise.reject(noQuorum());
        if (options.addRejected) return Promise.reject(new Error('add rejected'));
        fake.committed.add(node);
        if (options.joinListedAfterReads !== undefined) joining.set(node, options.joinListedAfterReads);
        if (!options.addFailsAfterCommit) return Promise.resolve();
        silent = options.silentReadsAfterFailedAdd ?? 0;
        return Promise.reject(new Error('timed out'));
      },
      configuration(cluster: ClusterView): Promise<readonly string[] | undefined> {
        expect(cluster).toBe(fake);
        if (silent > 0) {
          silent -= 1;
          return Promise.resolve(undefined);
        }
        if (!fake.hasQuorum() || fake.electing) return Promise.resolve(undefined);
        if (options.configurationFlaps) {
          flapped = !flapped;
          return Promise.resolve(NODES.filter((n) => fake.committed.has(n) && (n !== 'n3' || flapped)));
        }
        const pending = pendingRemoval;
        if (pending !== undefined) {
          pendingRemoval = undefined;
          setTimeout(() => {
            fake.log.push(`remove ${pending} committed`);
            fake.committed.delete(pending);
          }, options.removeCommitsLateMs);
        }
        const listed = NODES.filter((n) => fake.committed.has(n) && (joining.get(n) ?? 0) === 0);
        for (const [n, reads] of joining) joining.set(n, Math.max(0, reads - 1));
        return Promise.resolve(listed);
      },
    },
  };
}

const network = {
  cut: () => Promise.resolve(),
  degrade: () => Promise.resolve(),
  heal: () => Promise.resolve(),
};

function setUp(options: FakeSystemOptions = {}): { fake: FakeCluster; nemesis: Nemesis } {
  const fake = new FakeCluster();
  const nemesis = new Nemesis(fake, network, fakeSystem(fake, options), new Rng(1), ['member', 'pause']);
  return { fake, nemesis };
}

describe('Nemesis membership: a joiner starts only once the cluster has accepted it', () => {
  it('member-add while the majority is paused fails with an error and does not start the node', async () => {
    const { fake, nemesis } = setUp();
    expect(await nemesis.enact({ f: 'member-remove', value: ['n3'] })).toMatchObject({ outcome: 'ok' });
    await nemesis.enact({ f: 'pause', value: ['n1', 'n2'] });

    const add = await nemesis.enact({ f: 'member-add', value: 'one' });

    expect(add.outcome).toBe('error');
    expect(add.error).toMatch(/did not accept n3.*no quorum/);
    expect(fake.log).not.toContain('start n3');
    expect(fake.isMember('n3')).toBe(false);
    expect(fake.statusOf('n3')).toBe('removed');
    expect(fake.refused).toEqual([]);
  });

  it('a quorum system: with a majority killed or paused, member-remove and member-add are skipped at once, saying why', async () => {
    const { fake, nemesis } = setUp({ quorum: true });
    expect(await nemesis.enact({ f: 'member-remove', value: ['n3'] })).toMatchObject({ outcome: 'ok' });
    await nemesis.enact({ f: 'pause', value: ['n1'] });
    fake.log.length = 0;

    const add = await nemesis.enact({ f: 'member-add', value: 'one' });
    expect(add).toMatchObject({ outcome: 'skipped', nodes: [] });
    expect(add.error).toBe(
      '1 of 2 members are killed or paused (n1): no membership change can commit without a majority',
    );
    const remove = await nemesis.enact({ f: 'member-remove', value: ['n2'] });
    expect(remove.outcome).toBe('skipped');
    // Nothing was asked of the system, and nothing was wiped.
    expect(fake.log).toEqual([]);

    // With a majority running again, the add goes through.
    await nemesis.enact({ f: 'resume', value: ['n1'] });
    expect(await nemesis.enact({ f: 'member-add', value: 'one' })).toMatchObject({
      outcome: 'ok',
      nodes: ['n3'],
    });
    // One of three down leaves a majority: a remove is tried.
    await nemesis.enact({ f: 'pause', value: ['n3'] });
    expect(await nemesis.enact({ f: 'member-remove', value: ['n2'] })).toMatchObject({ outcome: 'ok' });
  });

  it('member-add starts the joiner after the add committed, on a wiped data dir', async () => {
    const { fake, nemesis } = setUp();
    await nemesis.enact({ f: 'member-remove', value: ['n2'] });

    const add = await nemesis.enact({ f: 'member-add', value: 'one' });

    expect(add).toMatchObject({ outcome: 'ok', nodes: ['n2'] });
    const at = (entry: string): number => fake.log.lastIndexOf(entry);
    expect(at('wipe n2')).toBeLessThan(at('add n2'));
    expect(at('add n2')).toBeLessThan(at('start n2'));
    expect(fake.refused).toEqual([]);
    expect(fake.isMember('n2')).toBe(true);
  });

  it('an add whose call failed but that committed starts the node: the committed configuration lists it', async () => {
    const { fake, nemesis } = setUp({ addFailsAfterCommit: true });
    await nemesis.enact({ f: 'member-remove', value: ['n1'] });

    const add = await nemesis.enact({ f: 'member-add', value: 'one' });

    expect(add).toMatchObject({ outcome: 'ok', nodes: ['n1'] });
    expect(fake.log).toContain('start n1');
    expect(fake.refused).toEqual([]);
  });

  it('an add whose call timed out waits for the configuration to answer before it gives up on the node', async () => {
    const { fake, nemesis } = setUp({ addFailsAfterCommit: true, silentReadsAfterFailedAdd: 3 });
    await nemesis.enact({ f: 'member-remove', value: ['n3'] });

    const add = await nemesis.enact({ f: 'member-add', value: 'one' });

    expect(add).toMatchObject({ outcome: 'ok', nodes: ['n3'] });
    expect(fake.log).toContain('start n3');
    expect(fake.refused).toEqual([]);
  });

  it('healAll resumes the paused majority first, then adds the removed member, then starts it', async () => {
    const { fake, nemesis } = setUp();
    await nemesis.enact({ f: 'member-remove', value: ['n3'] });
    await nemesis.enact({ f: 'pause', value: ['n1', 'n2'] });
    expect((await nemesis.enact({ f: 'member-add', value: 'one' })).outcome).toBe('error');
    fake.log.length = 0;

    expect(await nemesis.healAll()).toEqual([]);

    expect(fake.log).toEqual(['resume n1', 'resume n2', 'wipe n3', 'add n3', 'start n3']);
    expect(fake.refused).toEqual([]);
    expect(fake.nodesIn('running')).toEqual(NODES);
    expect(fake.members).toEqual(NODES);
  });

  it('healAll reconciles a removal that committed after its call failed, once the restarted cluster answers for its configuration', async () => {
    // dqlite seed 4: `.remove n2` failed while n2 was still listed; the change committed after the
    // restarts of the heal, when no member answered for the configuration yet.
    const { fake, nemesis } = setUp({ removeFailsUncommitted: true });
    expect(await nemesis.enact({ f: 'member-remove', value: ['n3'] })).toMatchObject({ outcome: 'error' });
    expect(fake.isMember('n3')).toBe(true);
    fake.committed.delete('n3');
    fake.electing = true;
    fake.log.length = 0;

    expect(await nemesis.healAll()).toEqual([]);

    expect(fake.log.slice(-2)).toEqual(['add n3', 'start n3']);
    expect(fake.refused).toEqual([]);
    expect([...fake.committed].sort()).toEqual(NODES);
    expect(fake.members).toEqual(NODES);
  });

  it('healAll reconciles with a configuration that has stopped changing: a removal whose call failed commits after a read still listed the node', async () => {
    // dqlite seed 4 (10-minute control): `.remove n5` answered "lost leadership" with the change in
    // the logs of other members; it committed after the reset had read a configuration.
    const { fake, nemesis } = setUp({ removeCommitsLateMs: 300 });
    expect(await nemesis.enact({ f: 'member-remove', value: ['n3'] })).toMatchObject({ outcome: 'error' });
    expect(fake.isMember('n3')).toBe(true);
    fake.log.length = 0;

    expect(await nemesis.healAll()).toEqual([]);

    // The heal waited until the change had committed, then dropped n3 and added it back.
    expect(fake.log[0]).toBe('remove n3 committed');
    expect(fake.log.slice(-2)).toEqual(['add n3', 'start n3']);
    expect(fake.refused).toEqual([]);
    expect([...fake.committed].sort()).toEqual(NODES);
    expect(fake.members).toEqual(NODES);
  });

  it('a node the late removal dropped that the cluster will not take back stays out, said in the heal errors', async () => {
    const { fake, nemesis } = setUp({ removeCommitsLateMs: 0, addRejected: true });
    expect(await nemesis.enact({ f: 'member-remove', value: ['n3'] })).toMatchObject({ outcome: 'error' });

    const errors = await nemesis.healAll();

    expect(errors).toEqual([
      expect.stringMatching(/^member-add n3: the cluster did not accept n3.*add rejected/),
    ]);
    expect(fake.committed.has('n3')).toBe(false);
    expect(fake.isMember('n3')).toBe(false);
    expect(fake.log).not.toContain('start n3');
  });

  it('healAll leaves a joiner it started alone while its join is not listed yet: one start, not a second with a fresh id', async () => {
    const { fake, nemesis } = setUp({ joinListedAfterReads: 4 });
    await nemesis.enact({ f: 'member-remove', value: ['n2'] });
    fake.log.length = 0;
    const heard: unknown[][] = [];

    expect(await nemesis.healAll((phase, op) => heard.push([phase, op.f, op.value]))).toEqual([]);

    expect(fake.log.filter((e) => e === 'start n2')).toHaveLength(1);
    expect(fake.log.filter((e) => e === 'wipe n2')).toHaveLength(1);
    expect(fake.members).toEqual(NODES);
    expect(heard).toEqual([
      ['invoke', 'member-add', ['n2']],
      ['done', 'member-add', ['n2']],
    ]);
  });

  it('two heals at once run one after the other: the second finds nothing left to undo', async () => {
    const { fake, nemesis } = setUp();
    await nemesis.enact({ f: 'member-remove', value: ['n3'] });
    await nemesis.enact({ f: 'pause', value: ['n1'] });
    fake.log.length = 0;

    expect(await Promise.all([nemesis.healAll(), nemesis.healAll()])).toEqual([[], []]);

    expect(fake.log).toEqual(['resume n1', 'wipe n3', 'add n3', 'start n3']);
    expect(nemesis.lastHeal()?.ops).toEqual([]);
  });

  it('a heal-all line (a quiet period of --pace, kept in bug records) undoes every fault as healAll does', async () => {
    const { fake, nemesis } = setUp();
    await nemesis.enact({ f: 'member-remove', value: ['n3'] });
    await nemesis.enact({ f: 'pause', value: ['n1'] });
    fake.log.length = 0;

    // Its outcome names the nodes it resumed and added back, as the reset's ops do.
    expect(await nemesis.enact({ f: 'heal-all', value: null })).toMatchObject({
      outcome: 'ok',
      nodes: ['n1', 'n3'],
    });

    expect(fake.log).toEqual(['resume n1', 'wipe n3', 'add n3', 'start n3']);
    expect(nemesis.lastHeal()?.ops).toEqual([
      { f: 'resume', value: ['n1'] },
      { f: 'member-add', value: ['n3'] },
    ]);
    expect(fake.nodesIn('running')).toEqual(NODES);
  });

  it('a schedule may have heal-all lines on any system; a Jepsen name is pointed to ours', () => {
    const system = fakeSystem(new FakeCluster());
    expect(unsupportedFault('heal-all', system, 'fake', 3)).toBeUndefined();
    expect(unsupportedFault('lose-unfsynced-writes', system, 'fake', 3)).toBe(
      "lose-unfsynced-writes is Jepsen's name for a fault Mallory calls lose-unfsynced",
    );
  });

  it('a heal-all line that cannot undo a fault is an error naming it', async () => {
    const { nemesis } = setUp({ addRejected: true });
    await nemesis.enact({ f: 'member-remove', value: ['n3'] });

    const outcome = await nemesis.enact({ f: 'heal-all', value: null });

    expect(outcome.outcome).toBe('error');
    expect(outcome.error).toMatch(/^member-add n3: the cluster did not accept n3/);
  });

  it('healAll reports an add the cluster never accepts and leaves the node stopped', async () => {
    const { fake, nemesis } = setUp({ addRejected: true });
    await nemesis.enact({ f: 'member-remove', value: ['n3'] });

    const errors = await nemesis.healAll();

    expect(errors).toEqual([
      expect.stringMatching(/^member-add n3: the cluster did not accept n3.*add rejected/),
    ]);
    expect(fake.log).not.toContain('start n3');
    expect(fake.refused).toEqual([]);
  });
});

describe('Nemesis calls cut short (the time budget, Ctrl-C)', () => {
  /** How far a test's world may run in virtual time before it fails. */
  const VIRTUAL_LIMIT_MS = 600_000;

  function inWorld(
    options: FakeSystemOptions,
    runStop?: AbortSignal,
  ): { fake: FakeCluster; nemesis: Nemesis; world: World; clock: WorldClock } {
    const world = new World({ seed: 1 });
    const clock = new WorldClock(world);
    const fake = new FakeCluster();
    const nemesis = new Nemesis(fake, network, fakeSystem(fake, options), new Rng(1), ['member'], {
      clock,
      ...(runStop ? { signal: runStop } : {}),
    });
    return { fake, nemesis, world, clock };
  }

  it('a membership call that never returns comes back at its signal as an error saying it was cut short; the reset goes on', async () => {
    const budget = new AbortController();
    let given: AbortSignal | undefined;
    const { fake, nemesis, world, clock } = inWorld({
      removeNeverReturns: (signal) => {
        given = signal;
        // The budget is reached while the call is out.
        world.scheduler.after(5_000, 0, undefined, () => {
          budget.abort(new BudgetReached(60_000));
        });
      },
    });
    const begun = clock.nowMs();
    const outcome = await world.settle(
      nemesis.enact({ f: 'member-remove', value: ['n3'] }, undefined, budget.signal),
      VIRTUAL_LIMIT_MS,
    );

    expect(outcome).toEqual({
      fault: { f: 'member-remove', value: ['n3'] },
      nodes: [],
      outcome: 'error',
      error: 'cut short at the time budget (--time 60 s)',
    });
    expect(clock.nowMs() - begun).toBe(5_000);
    // The adapter was given the signal, to stop by.
    expect(given?.aborted).toBe(true);
    // Its outcome is open: the reset reconciles with a configuration that has stopped changing
    // (it lists n3, so n3 stays), after waiting a little for the cut call.
    expect(await world.settle(nemesis.healAll(), VIRTUAL_LIMIT_MS)).toEqual([]);
    expect(fake.members).toEqual(NODES);
    expect(fake.log).toEqual(['remove n3 (never returns)']);
  });

  it('a fault enacted once its signal has fired is not called at all', async () => {
    const budget = new AbortController();
    budget.abort(new BudgetReached(60_000));
    const { fake, nemesis, world } = inWorld({ removeNeverReturns: () => undefined });
    const outcome = await world.settle(
      nemesis.enact({ f: 'member-remove', value: ['n3'] }, undefined, budget.signal),
      VIRTUAL_LIMIT_MS,
    );
    expect(outcome).toEqual({
      fault: { f: 'member-remove', value: ['n3'] },
      nodes: [],
      outcome: 'error',
      error: 'cut short at the time budget (--time 60 s)',
    });
    expect(fake.log).toEqual([]);
  });

  it('Ctrl-C ends a reset that waits for an unsettled membership change to settle (it would wait a minute)', async () => {
    const stop = new AbortController();
    const { fake, nemesis, world, clock } = inWorld(
      { removeFailsUncommitted: true, configurationFlaps: true },
      stop.signal,
    );
    expect(
      await world.settle(nemesis.enact({ f: 'member-remove', value: ['n3'] }), VIRTUAL_LIMIT_MS),
    ).toMatchObject({ outcome: 'error' });
    expect(fake.isMember('n3')).toBe(true);
    const begun = clock.nowMs();
    // Ctrl-C comes 3 s into the reset, which waits for a configuration that never answers the same twice.
    world.scheduler.after(3_000, 0, undefined, () => {
      stop.abort();
    });
    const errors = await world.settle(nemesis.healAll(), VIRTUAL_LIMIT_MS);

    expect(clock.nowMs() - begun).toBe(3_000);
    expect(errors).toEqual([
      'member n3: a membership change whose call failed is still unsettled: the run stopped before the configuration answered the same twice',
    ]);
  });
});

describe('Nemesis skips', () => {
  it('say why a fault found nothing to act on', async () => {
    const { nemesis } = setUp();
    expect(await nemesis.enact({ f: 'pause', value: 'leader' })).toMatchObject({
      outcome: 'skipped',
      error: 'no node answered as leader',
    });
    expect(await nemesis.enact({ f: 'resume', value: 'all' })).toMatchObject({
      outcome: 'skipped',
      error: 'no node or link to act on in its state',
    });
  });
});

describe('Nemesis and failures of Mallory itself', () => {
  it('a fault or a reset that meets a HarnessError throws it instead of reporting a fault error', async () => {
    const fake = new FailingStart();
    const nemesis = new Nemesis(fake, network, fakeSystem(fake), new Rng(1), ['member', 'pause', 'kill']);
    await fake.kill('n1');
    await expect(nemesis.healAll()).rejects.toBeInstanceOf(HarnessError);

    const other = new FailingStart();
    const second = new Nemesis(other, network, fakeSystem(other), new Rng(1), ['member']);
    await second.enact({ f: 'member-remove', value: ['n2'] });
    await expect(second.enact({ f: 'member-add', value: 'one' })).rejects.toBeInstanceOf(HarnessError);
    expect(other.log).toContain('start n2');
  });

  it('an ordinary failure to start a node is still a reset error', async () => {
    const fake = new FakeCluster();
    fake.start = (node: string) => Promise.reject(new Error(`${node} did not start`));
    const nemesis = new Nemesis(fake, network, fakeSystem(fake), new Rng(1), ['kill']);
    await fake.kill('n1');
    expect(await nemesis.healAll()).toEqual(['start n1: n1 did not start']);
  });
});

/** A disk layer that records the commands each node's layer got, and when (relative to kills). */
function fakeLayer(
  fake: FakeCluster,
  answer = 'ok',
  granularity?: TornGranularity,
): { commands: string[]; disks: NodeDisks } {
  const commands: string[] = [];
  const disks = new NodeDisks(
    {
      isMounted: () => true,
      command: (node: string, line: string) => {
        commands.push(`${node} ${line} (${fake.statusOf(node)})`);
        return answer === 'ok' ? Promise.resolve('') : Promise.reject(new Error(answer));
      },
    },
    undefined,
    undefined,
    granularity,
  );
  return { commands, disks };
}

describe('NodeDisks.exitCause', () => {
  const MS = 1_000_000;
  it('puts an exit down to the fault that failed the disk then, or up to the grace after its heal', async () => {
    let now = 0;
    const disks = new NodeDisks({ isMounted: () => true, command: () => Promise.resolve('') }, () => now);
    now = 1_000 * MS;
    await disks.fsyncError(['n1']);
    now = 2_000 * MS;
    await disks.full(['n2']);
    expect(disks.exitCause('n1', 500 * MS)).toBeUndefined();
    expect(disks.exitCause('n1', 1_500 * MS)).toBe('fsync-error');
    expect(disks.exitCause('n2', 1_500 * MS)).toBeUndefined();
    expect(disks.exitCause('n3', 1_500 * MS)).toBeUndefined();
    now = 5_000 * MS;
    await disks.heal(['n1']);
    expect(disks.exitCause('n1', (5_000 + INDUCED_EXIT_GRACE_MS) * MS)).toBe('fsync-error');
    expect(disks.exitCause('n1', (5_001 + INDUCED_EXIT_GRACE_MS) * MS)).toBeUndefined();
    expect(disks.exitCause('n2', 60_000 * MS)).toBe('disk-full');
    now = (5_001 + INDUCED_EXIT_GRACE_MS) * MS;
    disks.forgetEnded();
    // Kept while a crash report begun in it may still be ended by a signal.
    expect(disks.reportWindows('n1', now)).toHaveLength(1);
    now = (5_001 + INDUCED_EXIT_GRACE_MS + CRASH_REPORT_MAX_MS) * MS;
    expect(disks.reportWindows('n1', now)).toHaveLength(0);
    disks.forgetEnded();
    expect(disks.exitCause('n1', 1_500 * MS)).toBeUndefined();
    expect(disks.exitCause('n2', 60_000 * MS)).toBe('disk-full');
  });

  it('does not put down to a fault the exit of a process started after its heal (a restart that fails at once)', async () => {
    let now = 1_000 * MS;
    const disks = new NodeDisks({ isMounted: () => true, command: () => Promise.resolve('') }, () => now);
    await disks.full(['n1']);
    now = 5_000 * MS;
    await disks.heal(['n1']);
    const exitTs = 5_500 * MS;
    // The process that ran under the fault, or one whose start time is not known: the fault's.
    expect(disks.exitCause('n1', exitTs, 900 * MS)).toBe('disk-full');
    expect(disks.exitCause('n1', exitTs)).toBe('disk-full');
    expect(disks.reportWindows('n1', exitTs, 900 * MS)).toHaveLength(1);
    // One the reset started after the heal never had a call of its fail: judged for what it says.
    expect(disks.exitCause('n1', exitTs, 5_200 * MS)).toBeUndefined();
    expect(disks.reportWindows('n1', exitTs, 5_200 * MS)).toHaveLength(0);
  });

  it("keeps the node's log sizes when its disk began to fail: where the crash text that announces its exit starts", async () => {
    const sizes = new Map([['n1', { 'stderr.log': 10 }]]);
    const disks = new NodeDisks(
      { isMounted: () => true, command: () => Promise.resolve('') },
      () => 1_000 * MS,
      (node) => sizes.get(node) ?? {},
    );
    await disks.full(['n1']);
    sizes.set('n1', { 'stderr.log': 99 });
    await disks.fsyncError(['n1']);
    expect(disks.errorAt('n1', 1_000 * MS)).toEqual({
      node: 'n1',
      cause: 'disk-full',
      fromNs: 1_000 * MS,
      fromBytes: { 'stderr.log': 10 },
    });
  });

  it("keeps the node's log sizes when the grace after the heal ended: where a report the fault started must have begun", async () => {
    vi.useFakeTimers();
    try {
      const sizes = new Map([['n1', { 'stdout.log': 10 }]]);
      const disks = new NodeDisks(
        { isMounted: () => true, command: () => Promise.resolve('') },
        () => 1_000 * MS,
        (node) => sizes.get(node) ?? {},
      );
      await disks.fsyncError(['n1']);
      await disks.heal(['n1']);
      sizes.set('n1', { 'stdout.log': 50 });
      expect(disks.reportWindows('n1', 1_000 * MS)[0].untilBytes).toBeUndefined();
      vi.advanceTimersByTime(INDUCED_EXIT_GRACE_MS);
      expect(disks.reportWindows('n1', 1_000 * MS)[0]).toMatchObject({
        fromBytes: { 'stdout.log': 10 },
        untilBytes: { 'stdout.log': 50 },
      });
    } finally {
      vi.useRealTimers();
    }
  });

  it('slow-disk and lost writes excuse no exit', async () => {
    const disks = new NodeDisks({ isMounted: () => true, command: () => Promise.resolve('') }, () => 0);
    await disks.slow(['n1'], 50);
    await disks.loseUnfsynced(['n2']);
    await disks.tornWrite(['n3'], 7);
    for (const n of NODES) expect(disks.exitCause(n, 0)).toBeUndefined();
  });
});

describe('Nemesis disk faults', () => {
  it('are offered only with a disk layer, and heal-disk undoes them', () => {
    const fake = new FakeCluster();
    const without = new Nemesis(fake, network, fakeSystem(fake), new Rng(1), ['disk']);
    expect(without.actionSpace().kinds).toEqual([]);
    const { disks } = fakeLayer(fake);
    const nemesis = new Nemesis(fake, network, fakeSystem(fake), new Rng(1), ['disk'], { disks });
    expect(nemesis.actionSpace().kinds).toEqual([
      'lose-unfsynced',
      'torn-write',
      'fsync-error',
      'slow-disk',
      'disk-full',
      'heal-disk',
    ]);
  });

  it('lose-unfsynced kills the nodes before it drops their writes; heal-disk starts them again', async () => {
    const fake = new FakeCluster();
    const { commands, disks } = fakeLayer(fake);
    const nemesis = new Nemesis(fake, network, fakeSystem(fake), new Rng(1), ['disk'], { disks });
    expect(await nemesis.enact({ f: 'lose-unfsynced', value: ['n1', 'n2'] })).toMatchObject({
      outcome: 'ok',
      nodes: ['n1', 'n2'],
    });
    expect(commands).toEqual(['n1 drop-unfsynced (killed)', 'n2 drop-unfsynced (killed)']);
    expect(fake.nodesIn('killed')).toEqual(['n1', 'n2']);
    expect(await nemesis.enact({ f: 'heal-disk', value: 'all' })).toMatchObject({ nodes: ['n1', 'n2'] });
    expect(fake.nodesIn('running')).toEqual(NODES);
  });

  it('torn-write kills the nodes, then tears their writes with a seed drawn from the run and recorded', async () => {
    const fake = new FakeCluster();
    const { commands, disks } = fakeLayer(fake);
    const nemesis = new Nemesis(fake, network, fakeSystem(fake), new Rng(1), ['disk'], { disks });
    const first = await nemesis.enact({ f: 'torn-write', value: 'one' });
    expect(first).toMatchObject({ outcome: 'ok', nodes: [expect.any(String) as string] });
    const drawn = first.value as { target: string; seed: number; granularity: string };
    expect(drawn.target).toBe('one');
    expect(Number.isInteger(drawn.seed)).toBe(true);
    expect(drawn.granularity).toBe('sector');
    const node = first.nodes[0];
    expect(commands).toEqual([`${node} torn-write ${drawn.seed} sector (killed)`]);
    // The same run seed draws the same cut; a recorded value keeps its seed.
    const again = new Nemesis(fake, network, fakeSystem(fake), new Rng(1), ['disk'], { disks });
    expect((await again.enact({ f: 'torn-write', value: 'one' })).value).toEqual(drawn);
    const replayed = await nemesis.enact(
      { f: 'torn-write', value: { target: 'one', seed: 42 } },
      { nodes: ['n2'] },
    );
    expect(replayed).toMatchObject({
      nodes: ['n2'],
      value: { target: 'one', seed: 42, granularity: 'sector' },
    });
    expect(commands.at(-1)).toBe('n2 torn-write 42 sector (killed)');
    expect(await nemesis.enact({ f: 'torn-write', value: { target: 'one', seed: -1 } })).toMatchObject({
      outcome: 'error',
      error: expect.stringMatching(/^torn-write takes a target, or/) as string,
    });
    await nemesis.enact({ f: 'heal-disk', value: 'all' });
    expect(fake.nodesIn('running')).toEqual(NODES);
  });

  it("torn-write cuts at the run's granularity unless the recorded value says its own; a bad one is refused", async () => {
    const fake = new FakeCluster();
    const { commands, disks } = fakeLayer(fake, 'ok', 'byte');
    const nemesis = new Nemesis(fake, network, fakeSystem(fake), new Rng(1), ['disk'], { disks });
    const drawn = await nemesis.enact({ f: 'torn-write', value: ['n1'] });
    expect(drawn.value).toMatchObject({ target: ['n1'], granularity: 'byte' });
    expect(commands.at(-1)).toMatch(/^n1 torn-write \d+ byte \(killed\)$/);
    await nemesis.enact({ f: 'torn-write', value: { target: ['n2'], seed: 5, granularity: 'sector' } });
    expect(commands.at(-1)).toBe('n2 torn-write 5 sector (killed)');
    expect(
      await nemesis.enact({
        f: 'torn-write',
        value: { target: 'one', seed: 5, granularity: 'bit' } as never,
      }),
    ).toMatchObject({ outcome: 'error', error: `torn-write's granularity is sector or byte, not "bit"` });
  });

  it('heal-disk starts a node that stopped by itself while its fsyncs failed, not one the nemesis killed', async () => {
    const fake = new FakeCluster();
    const { disks } = fakeLayer(fake);
    const nemesis = new Nemesis(fake, network, fakeSystem(fake), new Rng(1), ['disk', 'kill'], { disks });
    await nemesis.enact({ f: 'fsync-error', value: ['n1', 'n2'] });
    await fake.kill('n1', 'exited'); // n1 stops on EIO by itself
    await nemesis.enact({ f: 'kill', value: ['n2'] });
    await nemesis.enact({ f: 'heal-disk', value: 'all' });
    expect(fake.log.filter((l) => l.startsWith('start'))).toEqual(['start n1']);
    expect(fake.statusOf('n2')).toBe('killed');
  });

  it('fsync-error, disk-full and slow-disk are turned off by heal-disk and by the reset', async () => {
    const fake = new FakeCluster();
    const { commands, disks } = fakeLayer(fake);
    const nemesis = new Nemesis(fake, network, fakeSystem(fake), new Rng(1), ['disk'], { disks });
    await nemesis.enact({ f: 'fsync-error', value: ['n1'] });
    await nemesis.enact({ f: 'disk-full', value: ['n2'] });
    await nemesis.enact({ f: 'slow-disk', value: { target: 'one', delayMs: 50 } }, { nodes: ['n3'] });
    expect(await nemesis.enact({ f: 'heal-disk', value: ['n1'] })).toMatchObject({ nodes: ['n1'] });
    expect(await nemesis.healAll()).toEqual([]);
    expect(commands.map((c) => c.replace(/ \(running\)$/, ''))).toEqual([
      'n1 fsync-error on',
      'n2 full on',
      'n3 slow 50',
      'n1 fsync-error off',
      'n2 full off',
      'n3 slow 0',
    ]);
    expect(disks.faulted).toEqual([]);
  });

  it('a slow-disk without a delay and a layer that answers an error are fault errors', async () => {
    const fake = new FakeCluster();
    const { disks } = fakeLayer(fake, 'error unknown command');
    const nemesis = new Nemesis(fake, network, fakeSystem(fake), new Rng(1), ['disk'], { disks });
    expect(await nemesis.enact({ f: 'slow-disk', value: 'one' })).toMatchObject({
      outcome: 'error',
      error: expect.stringMatching(/^slow-disk needs a delayMs/) as string,
    });
    expect(await nemesis.enact({ f: 'disk-full', value: 'one' })).toMatchObject({
      outcome: 'error',
      error: 'error unknown command',
    });
  });
});

describe("Nemesis.healAll's journal (the reset in the history)", () => {
  it('names what each family undoes, before and after, in the order the reset does it', async () => {
    const fake = new FakeCluster();
    const nemesis = new Nemesis(fake, network, fakeSystem(fake), new Rng(1), ['partition', 'pause', 'kill']);
    await nemesis.enact({ f: 'start-partition', value: 'halves' });
    await nemesis.enact({ f: 'kill', value: ['n3'] });
    await nemesis.enact({ f: 'pause', value: ['n1'] });
    const heard: unknown[][] = [];

    expect(await nemesis.healAll((phase, op, errors) => heard.push([phase, op.f, op.value, errors]))).toEqual(
      [],
    );

    expect(heard).toEqual([
      ['invoke', 'stop-partition', NODES, undefined],
      ['done', 'stop-partition', NODES, []],
      ['invoke', 'resume', ['n1'], undefined],
      ['done', 'resume', ['n1'], []],
      ['invoke', 'start', ['n3'], undefined],
      ['done', 'start', ['n3'], []],
    ]);
    expect(fake.nodesIn('running')).toEqual(NODES);
  });

  it('hears nothing when no fault is in force, and the errors of the family that met them', async () => {
    const fake = new FakeCluster();
    const nemesis = new Nemesis(fake, network, fakeSystem(fake), new Rng(1), ['kill']);
    const heard: unknown[][] = [];
    await nemesis.healAll((phase, op, errors) => heard.push([phase, op.f, errors]));
    expect(heard).toEqual([]);

    fake.start = (node: string) => Promise.reject(new Error(`${node} did not start`));
    await fake.kill('n2');
    await nemesis.healAll((phase, op, errors) => heard.push([phase, op.f, errors]));
    expect(heard).toEqual([
      ['invoke', 'start', undefined],
      ['done', 'start', ['start n2: n2 did not start']],
    ]);
  });
});

describe('Nemesis with a family kept to some targets (--faults kill:one)', () => {
  it('offers kill only at the kept targets, and never leaves more than one node killed, whatever is chosen', async () => {
    const fake = new FakeCluster();
    const nemesis = new Nemesis(fake, network, fakeSystem(fake), new Rng(1), ['kill'], {}, { kill: ['one'] });
    const space = nemesis.actionSpace();
    expect(space.kinds).toEqual(['kill', 'start']);
    expect(space.valuesOf('kill')).toEqual(['one']);
    const rng = new Rng(7);
    let kills = 0;
    for (let i = 0; i < 200; i++) {
      // Even faults no policy would be offered (a replayed schedule's) stay within the limit.
      const value = rng.pick(['one', 'minority', 'majority', 'all'] as const);
      const f = rng.pick(['kill', 'kill', 'start'] as const);
      const outcome = await nemesis.enact({ f, value: f === 'start' ? 'all' : value });
      if (f === 'kill' && outcome.outcome === 'ok') kills++;
      expect(outcome.nodes.length).toBeLessThanOrEqual(f === 'kill' ? 1 : 3);
      expect(fake.nodesIn('killed', 'exited').length).toBeLessThanOrEqual(1);
    }
    expect(kills).toBeGreaterThan(20);
  });

  it('a kill while the one allowed node is down is skipped, saying why', async () => {
    const fake = new FakeCluster();
    const nemesis = new Nemesis(fake, network, fakeSystem(fake), new Rng(1), ['kill'], {}, { kill: ['one'] });
    expect(await nemesis.enact({ f: 'kill', value: 'one' })).toMatchObject({ outcome: 'ok' });
    const down = fake.nodesIn('killed')[0];
    expect(await nemesis.enact({ f: 'kill', value: 'one' })).toMatchObject({
      outcome: 'skipped',
      error: `--faults keeps kill to at most 1 node(s) down at once, and ${down} is down`,
    });
  });

  it('without kept targets, kill offers every target and two kills take two nodes', async () => {
    const fake = new FakeCluster();
    const nemesis = new Nemesis(fake, network, fakeSystem(fake), new Rng(1), ['kill']);
    expect(nemesis.actionSpace().valuesOf('kill')).toEqual(['one', 'minority', 'majority', 'all']);
    await nemesis.enact({ f: 'kill', value: 'one' });
    await nemesis.enact({ f: 'kill', value: 'one' });
    expect(fake.nodesIn('killed')).toHaveLength(2);
  });
});

describe("Nemesis: the system's leader answers", () => {
  it('are heard by every listener (the run records them as roles), and a missing answer is not', async () => {
    const fake = new FakeCluster();
    let answer: string | undefined = 'n2';
    const system: SystemAdapter = {
      ...fakeSystem(fake),
      leadership: { leader: () => Promise.resolve(answer) },
    };
    const nemesis = new Nemesis(fake, network, system, new Rng(1), ['kill']);
    const heard: string[] = [];
    nemesis.onLeader((node) => heard.push(node));
    expect(await nemesis.leader()).toBe('n2');
    answer = undefined;
    expect(await nemesis.leader()).toBeUndefined();
    answer = 'n3';
    await nemesis.leader();
    expect(heard).toEqual(['n2', 'n3']);
  });
});

describe('Nemesis: what can be enacted now', () => {
  const FAMILIES = ['partition', 'kill', 'pause'] as const;

  it('follows the cluster: undo kinds only with something in force, kill and pause only with room', async () => {
    const fake = new FakeCluster();
    const nemesis = new Nemesis(
      fake,
      network,
      fakeSystem(fake),
      new Rng(1),
      ['kill', 'pause'],
      {},
      { kill: ['one'] },
    );
    const space = nemesis.actionSpace();
    const now = (): string[] => space.kinds.filter((k) => space.enactable?.(k) === true);
    expect(now()).toEqual(['kill', 'pause']);
    await nemesis.enact({ f: 'kill', value: 'one' });
    expect(now()).toEqual(['start', 'pause']);
    await nemesis.enact({ f: 'start', value: 'all' });
    await nemesis.enact({ f: 'pause', value: 'all' });
    expect(now()).toEqual(['resume']);
  });

  it('offers member-add only with a member removed, and no change at all without a majority up', async () => {
    const fake = new FakeCluster();
    const nemesis = new Nemesis(fake, network, fakeSystem(fake, { quorum: true }), new Rng(1), ['member']);
    const space = nemesis.actionSpace();
    const now = (): string[] => space.kinds.filter((k) => space.enactable?.(k) === true);
    expect(now()).toEqual(['member-remove']);
    fake.setMember('n3', false);
    expect(now()).toEqual(['member-add']);
    fake.setMember('n3', true);
    await fake.kill('n1');
    await fake.kill('n2');
    expect(now()).toEqual([]);
  });

  it('the random baseline never draws a fault with nothing to act on; a space without the check does', async () => {
    const skipsOf = async (filtered: boolean): Promise<number> => {
      const fake = new FakeCluster();
      const nemesis = new Nemesis(fake, network, fakeSystem(fake), new Rng(3), [...FAMILIES]);
      const full = nemesis.actionSpace();
      const space = filtered ? full : { kinds: full.kinds, valuesOf: (k: FaultKind) => full.valuesOf(k) };
      const policy = createPolicy('random');
      const rng = new Rng(5);
      let skips = 0;
      for (let step = 0; step < 300; step++) {
        const fault = policy.decide({ state: undefined, space, rng, schedule: 0, step });
        if (fault === null) continue;
        if ((await nemesis.enact(fault)).outcome === 'skipped') skips++;
      }
      return skips;
    };
    expect(await skipsOf(true)).toBe(0);
    expect(await skipsOf(false)).toBeGreaterThan(30);
  });
});
