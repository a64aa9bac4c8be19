import { realClock } from '../../core/clock.js';
import { rethrowHarness } from '../../core/errors.js';
import { FAMILY_KINDS, type Fault, type FaultKind, type FaultValue } from '../../core/fault.js';
import {
  acted,
  type FamilyContext,
  type FamilySystem,
  type FaultFamilyPackage,
  type FaultOutcome,
  type HealOp,
  messageOf,
  type Recorded,
} from './family.js';

const MIN_MEMBERSHIP_NODES = 3;
const MIN_MEMBERS_AFTER_REMOVE = 2;
const RE_ADD_ATTEMPTS = 3;
const RE_ADD_READY_MS = 10_000;
const RECONCILE_ROUNDS = 2;
const RECONCILE_POLL_MS = 200;
/** How long a membership call that failed is given to show up (or not) in the committed configuration. */
const SETTLE_MS = 5_000;
/**
 * How long the reset waits for the configuration to answer, the same twice, after a change whose
 * outcome it could not see: the change may commit only once a new leader's term commits an entry
 * (dqlite seed 4: no leader for 30 s after the heal began, then the removal committed).
 */
const UNSETTLED_WAIT_MS = 60_000;
/** Two answers this far apart that agree are a configuration no earlier change will alter any more. */
const STABLE_GAP_MS = 1_000;

/** The members in the system's own configuration, if it can tell. */
async function realMembers(ctx: FamilyContext): Promise<readonly string[] | undefined> {
  try {
    return await ctx.system.membership?.configuration?.(ctx.cluster);
  } catch (error) {
    rethrowHarness(error);
    return undefined;
  }
}

/**
 * The committed configuration once some member answers for it, polling up to `withinMs`: right
 * after a membership call timed out the cluster may be busy with that very change (a slow disk, an
 * election), and "no answer" must not be read as "not a member".
 */
async function settledMembers(ctx: FamilyContext, withinMs: number): Promise<readonly string[] | undefined> {
  const clock = ctx.clock ?? realClock;
  const deadline = clock.nowMs() + withinMs;
  let real: readonly string[] | undefined;
  while ((real = await realMembers(ctx)) === undefined && clock.nowMs() < deadline && !stopped(ctx)) {
    await clock.sleep(RECONCILE_POLL_MS, ctx.signal);
  }
  return real;
}

/**
 * The committed configuration once it answers the same twice, `STABLE_GAP_MS` apart, polling up
 * to `withinMs`; undefined if it does not. After a change whose call failed, one answer is not
 * enough: the change may still be in some member's log and commit later.
 */
async function stableMembers(ctx: FamilyContext, withinMs: number): Promise<readonly string[] | undefined> {
  const clock = ctx.clock ?? realClock;
  const deadline = clock.nowMs() + withinMs;
  let last: readonly string[] | undefined;
  let waited = false;
  while (clock.nowMs() < deadline && !stopped(ctx)) {
    const real = await realMembers(ctx);
    if (real !== undefined && last !== undefined && sameMembers(real, last)) return real;
    last = real;
    if (real === undefined && !waited) {
      // Restarted members may be electing a leader: wait for the cluster to serve once (its
      // readiness may itself wait on this reconciliation, so at most RE_ADD_READY_MS).
      waited = true;
      await ctx.cluster.waitReady(
        Math.min(RE_ADD_READY_MS, Math.max(0, deadline - clock.nowMs())),
        ctx.signal,
      );
    } else await clock.sleep(real === undefined ? RECONCILE_POLL_MS : STABLE_GAP_MS, ctx.signal);
  }
  return undefined;
}

/** Whether the family's calls were told to stop (the budget, Ctrl-C). */
function stopped(ctx: FamilyContext): boolean {
  return ctx.signal?.aborted === true;
}

/** Throws, saying so, once the family's calls were told to stop: nothing new starts after it. */
function checkStopped(ctx: FamilyContext): void {
  if (stopped(ctx))
    throw new Error('the membership change was cut short: the run is past its budget or stopping');
}

function sameMembers(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((n) => b.includes(n));
}

/**
 * Makes a removed node a member again with a fresh data dir, and starts it (as a joiner) only
 * once the cluster has accepted it: `membership.add` resolved, or its call failed but the committed
 * configuration lists the node (a change can take effect after its call gave up). A joiner the
 * cluster does not list is refused — etcd exits — so otherwise the fault fails and the node stays
 * out until the next reset tries again.
 */
async function addBack(ctx: FamilyContext, node: string): Promise<void> {
  const c = ctx.cluster;
  if ((await realMembers(ctx))?.includes(node) !== true) {
    checkStopped(ctx);
    await c.kill(node, 'removed');
    await c.wipe(node);
    try {
      await ctx.system.membership!.add(node, c, ctx.signal);
    } catch (error) {
      rethrowHarness(error);
      // Cut short: the reset reconciles with the configuration once it has stopped changing.
      checkStopped(ctx);
      if ((await settledMembers(ctx, SETTLE_MS))?.includes(node) !== true) {
        throw new Error(`the cluster did not accept ${node}, so it was not started: ${messageOf(error)}`);
      }
    }
  }
  checkStopped(ctx);
  c.setMember(node, true);
  await c.start(node);
}

/**
 * Stops and wipes the members the system no longer counts (they would disrupt elections). A node
 * this heal started as a joiner (`joining`) may not be listed yet: its join is under way, and a
 * second process with a fresh id would find its address taken by the first one's. It is given
 * time to be listed, and left running (said in `errors`) if it is not.
 */
async function dropStrayMembers(
  ctx: FamilyContext,
  joining: ReadonlySet<string> = new Set(),
  errors: string[] = [],
  unsettled: Set<string> = new Set(),
): Promise<number> {
  const c = ctx.cluster;
  if (!ctx.system.membership?.configuration || !c.nodes.some((x) => c.isMember(x))) return 0;
  let real: readonly string[] | undefined;
  if (unsettled.size > 0) {
    // A change whose call failed: reconcile only with a configuration that has stopped changing.
    real = await stableMembers(ctx, UNSETTLED_WAIT_MS);
    if (real === undefined) {
      const why = stopped(ctx)
        ? 'the run stopped before the configuration answered the same twice'
        : `the configuration did not answer the same twice within ${UNSETTLED_WAIT_MS / 1000} s`;
      errors.push(
        `member ${[...unsettled].join(', ')}: a membership change whose call failed is still unsettled: ${why}`,
      );
      return 0;
    }
    unsettled.clear();
  } else real = await realMembers(ctx);
  if (real === undefined) {
    // The members this heal restarted may still be electing a leader: wait for the cluster to
    // serve (its readiness may itself wait on this reconciliation, so at most RE_ADD_READY_MS),
    // then ask again. A removal whose call failed may have committed meanwhile (dqlite, seed 4).
    await c.waitReady(RE_ADD_READY_MS, ctx.signal);
    real = await settledMembers(ctx, RE_ADD_READY_MS);
  }
  const unlisted = (): string[] => (real ? c.nodes.filter((x) => c.isMember(x) && !real!.includes(x)) : []);
  const clock = ctx.clock ?? realClock;
  const deadline = clock.nowMs() + RE_ADD_READY_MS;
  while (unlisted().some((x) => joining.has(x)) && clock.nowMs() < deadline && !stopped(ctx)) {
    await clock.sleep(RECONCILE_POLL_MS, ctx.signal);
    real = (await realMembers(ctx)) ?? real;
  }
  if (stopped(ctx)) return 0;
  const stray = unlisted().filter((x) => !joining.has(x));
  for (const n of unlisted().filter((x) => joining.has(x))) {
    errors.push(
      `member-add ${n}: started as a joiner, but the configuration does not list it after ${RE_ADD_READY_MS / 1000} s`,
    );
  }
  for (const n of stray) {
    await c.kill(n, 'removed');
    await c.wipe(n);
    c.setMember(n, false);
  }
  return stray.length;
}

/** Why no change can commit now — a majority of the members is killed or paused — or undefined. */
function withoutQuorum(c: FamilyContext['cluster']): string | undefined {
  const members = c.members;
  const down = members.filter((n) => c.statusOf(n) !== 'running');
  if (members.length === 0 || 2 * down.length < members.length) return undefined;
  return `${down.length} of ${members.length} members are killed or paused (${down.join(', ')}): no membership change can commit without a majority`;
}

/** `member-remove` (the node is stopped and wiped once out) / `member-add` (back with a fresh dir). */
export class MemberFamily implements FaultFamilyPackage {
  readonly family = 'member';
  readonly kinds = FAMILY_KINDS.member;
  /** Nodes whose last membership change's call failed without its outcome seen: it may commit later. */
  private readonly unsettled = new Set<string>();

  unsupported(system: FamilySystem, systemName: string, nodeCount: number): string | undefined {
    if (!system.membership) return `${systemName} has no membership changes`;
    if (nodeCount < MIN_MEMBERSHIP_NODES)
      return `membership changes need at least ${MIN_MEMBERSHIP_NODES} nodes`;
    return undefined;
  }

  offered(ctx: FamilyContext): boolean {
    return ctx.system.membership !== undefined && ctx.cluster.nodes.length >= MIN_MEMBERSHIP_NODES;
  }

  values({ ctx }: { ctx: FamilyContext }): { 'member-remove': FaultValue[]; 'member-add': FaultValue[] } {
    return {
      'member-remove': ctx.system.leadership ? ['one', 'leader'] : ['one'],
      'member-add': ['one'],
    };
  }

  /** `member-add` with a member removed; `member-remove` with a live member to spare; both with quorum. */
  enactable(kind: FaultKind, ctx: FamilyContext): boolean {
    const c = ctx.cluster;
    if (ctx.system.membership?.quorum === true && withoutQuorum(c) !== undefined) return false;
    if (kind === 'member-add') return c.nodes.some((n) => !c.isMember(n));
    const members = c.members;
    return members.length - 1 >= MIN_MEMBERS_AFTER_REMOVE && members.some((n) => c.statusOf(n) === 'running');
  }

  async enact(fault: Fault, ctx: FamilyContext, recorded?: Recorded): Promise<FaultOutcome> {
    const c = ctx.cluster;
    const noQuorum = ctx.system.membership?.quorum === true ? withoutQuorum(c) : undefined;
    if (noQuorum !== undefined) return { fault, nodes: [], outcome: 'skipped', error: noQuorum };
    if (fault.f === 'member-add') {
      const removed = c.nodes.filter((n) => !c.isMember(n));
      const nodes = (await ctx.targetNodes(fault.value, removed, recorded?.nodes)).slice(0, 1);
      if (nodes.length === 0 || !ctx.system.membership) return acted(fault, []);
      // Open until the call's outcome is seen: a call that fails, or is cut short (or never
      // returns), leaves it to the reset to reconcile.
      this.unsettled.add(nodes[0]);
      await addBack(ctx, nodes[0]);
      this.unsettled.delete(nodes[0]);
      return acted(fault, nodes);
    }
    const members = c.members;
    if (members.length - 1 < MIN_MEMBERS_AFTER_REMOVE) return acted(fault, []);
    const live = members.filter((n) => c.statusOf(n) === 'running');
    const nodes = (await ctx.targetNodes(fault.value, live, recorded?.nodes)).slice(0, 1);
    if (nodes.length === 0 || !ctx.system.membership) return acted(fault, []);
    const node = nodes[0];
    // Open until the call's outcome is seen (as for an add).
    this.unsettled.add(node);
    try {
      await ctx.system.membership.remove(node, c, ctx.signal);
    } catch (error) {
      rethrowHarness(error);
      // Cut short (the budget, Ctrl-C): the reset reconciles with the configuration once it has
      // stopped changing.
      checkStopped(ctx);
      // The call failed but the change may still have committed (e.g. leadership lost after
      // appending it): then the node is out and must be stopped like any removed member.
      if ((await settledMembers(ctx, SETTLE_MS))?.includes(node) !== false) throw error;
    }
    // A call that answered only after it was cut short acts no more: the reset reconciles.
    checkStopped(ctx);
    this.unsettled.delete(node);
    c.setMember(node, false);
    await c.kill(node, 'removed');
    await c.wipe(node);
    return acted(fault, nodes);
  }

  undoing(ctx: FamilyContext): HealOp | undefined {
    const c = ctx.cluster;
    const missing = c.nodes.filter((x) => !c.isMember(x));
    return missing.length > 0 ? { f: 'member-add', value: missing } : undefined;
  }

  /**
   * Last, once the other nodes run: a change whose outcome we could not see may have taken effect,
   * so reconcile with the system's own configuration, re-add what is missing, and check once more.
   */
  async heal(ctx: FamilyContext, errors: string[]): Promise<readonly string[]> {
    const c = ctx.cluster;
    const joining = new Set<string>();
    for (let round = 0; round < RECONCILE_ROUNDS; round++) {
      const stray = await dropStrayMembers(ctx, joining, errors, this.unsettled);
      const missing = c.nodes.filter((x) => !c.isMember(x));
      if (round > 0 && stray === 0) break;
      for (const n of missing) {
        // Adding a member needs a leader: after restarts, give the cluster time to elect one.
        for (let attempt = 1; attempt <= RE_ADD_ATTEMPTS && !stopped(ctx); attempt++) {
          await c.waitReady(RE_ADD_READY_MS, ctx.signal);
          try {
            await addBack(ctx, n);
            joining.add(n);
            break;
          } catch (error) {
            rethrowHarness(error);
            if (attempt === RE_ADD_ATTEMPTS) errors.push(`member-add ${n}: ${messageOf(error)}`);
          }
        }
      }
      if ((missing.length === 0 && stray === 0) || stopped(ctx)) break;
    }
    return [...joining];
  }
}
