import type { Event } from '../core/event.js';
import type { State } from '../core/state.js';
import { type Role, roleOfText, roleOfValue } from '../observe/role.js';
import type { Window } from '../timeline/window.js';
import type { Abstraction } from './abstraction.js';
import { type ClusterOptions, StateClusters } from './clusters.js';
import { crossPairs, intraPairs, isInternal, type Labeler } from './pairs.js';

/**
 * Our abstraction (`causal`, the default): the artifact's intra-node pairs plus
 * - cross-node causal pairs `x:` (a = last internal event on X before a send, b = first internal
 *   event on Y after the matching receive), from the window's happens-before edges;
 * - role labels instead of node ids: each event is labelled with its node's role at that moment
 *   (`L`, `F`, `C`, `?` unknown), learned from role events (`attrs.role`, `become-leader`, log lines
 *   such as "became leader") and carried across windows;
 * - summary features: how many nodes were leader during the window (`leaders:2` is split brain),
 *   how many known nodes were silent (killed, paused, cut off), and bucketed attributes: for each
 *   numeric attribute in `bucketAttrs` (default `term`), ⌈log2(max − min + 1)⌉ over the window.
 * Features are hashed and clustered like the artifact's (MinHash, threshold default 0.7).
 *
 * Stateful (roles, known nodes, clusters): one instance per campaign; call `resetEpisode()` after
 * the cluster is reset between schedules (roles are forgotten).
 */
export interface CausalOptions extends ClusterOptions {
  readonly roles?: boolean;
  readonly cross?: boolean;
  readonly intra?: boolean;
  readonly summary?: boolean;
  readonly bucketAttrs?: readonly string[];
}

const ROLE_LABEL: Readonly<Record<Role, string>> = { leader: 'L', follower: 'F', candidate: 'C' };
const UNKNOWN_ROLE = '?';

export function log2Bucket(delta: number): number {
  return delta <= 0 ? 0 : Math.ceil(Math.log2(delta + 1));
}

export class CausalAbstraction implements Abstraction {
  readonly name = 'causal';
  private readonly clusters: StateClusters;
  private readonly useRoles: boolean;
  private readonly useCross: boolean;
  private readonly useIntra: boolean;
  private readonly useSummary: boolean;
  private readonly bucketAttrs: readonly string[];
  private readonly roles = new Map<string, Role>();
  private readonly knownNodes = new Set<string>();
  private readonly roleOfType = new Map<string, Role | undefined>();

  constructor(options: CausalOptions = {}) {
    this.clusters = new StateClusters(options);
    this.useRoles = options.roles ?? true;
    this.useCross = options.cross ?? true;
    this.useIntra = options.intra ?? true;
    this.useSummary = options.summary ?? true;
    this.bucketAttrs = options.bucketAttrs ?? ['term'];
  }

  resetEpisode(): void {
    this.roles.clear();
  }

  seed(features: readonly string[]): string {
    return this.clusters.assign(features);
  }

  abstract(window: Window): State {
    const { labels, leaders } = this.followRoles(window.events);
    const label: Labeler | undefined = this.useRoles
      ? (e) => (labels.get(e) ?? UNKNOWN_ROLE) + ':'
      : undefined;
    const features = new Set<string>();
    if (this.useIntra) {
      for (const p of intraPairs(window.events, new Set(), label)) features.add('p:' + p);
    }
    if (this.useCross) {
      for (const p of crossPairs(window, new Set(), label)) features.add('x:' + p);
    }
    if (this.useSummary) this.summarise(window.events, leaders, features);
    const sorted = [...features].sort();
    return { id: this.clusters.assign(sorted), features: sorted };
  }

  /**
   * Each internal event's role label (the role its node holds once the event happened), and the
   * nodes that were leader while active in the window.
   */
  private followRoles(events: readonly Event[]): { labels: Map<Event, string>; leaders: Set<string> } {
    const labels = new Map<Event, string>();
    const leaders = new Set<string>();
    for (const e of events) {
      const role = this.roleIn(e);
      if (role) this.roles.set(e.node, role);
      if (!isInternal(e)) continue;
      const r = this.roles.get(e.node);
      if (r === 'leader') leaders.add(e.node);
      labels.set(e, r ? ROLE_LABEL[r] : UNKNOWN_ROLE);
    }
    return { labels, leaders };
  }

  private roleIn(e: Event): Role | undefined {
    const fromAttr = roleOfValue(e.attrs?.role);
    if (fromAttr) return fromAttr;
    if (e.source !== 'probe' && e.source !== 'log') return undefined;
    if (!this.roleOfType.has(e.type)) this.roleOfType.set(e.type, roleOfText(e.type));
    return this.roleOfType.get(e.type);
  }

  private summarise(events: readonly Event[], leaders: ReadonlySet<string>, out: Set<string>): void {
    const active = new Set<string>();
    const ranges = new Map<string, [number, number]>();
    for (const e of events) {
      if (!isInternal(e)) continue;
      active.add(e.node);
      this.knownNodes.add(e.node);
      for (const key of this.bucketAttrs) {
        const v = e.attrs?.[key];
        if (typeof v !== 'number') continue;
        const r = ranges.get(key);
        if (r) {
          r[0] = Math.min(r[0], v);
          r[1] = Math.max(r[1], v);
        } else ranges.set(key, [v, v]);
      }
    }
    out.add(`s:leaders=${leaders.size}`);
    out.add(`s:silent=${this.knownNodes.size - active.size}`);
    for (const [key, [lo, hi]] of ranges) out.add(`b:${key}=${log2Bucket(hi - lo)}`);
  }
}
