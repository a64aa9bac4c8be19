import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';

import type { BugHit, BugRecord } from '../bug.js';
import type { Finding } from '../checker.js';
import type { RunConfig } from '../config.js';
import {
  BUG_SCHEDULE_FILE,
  formatBugSchedule,
  type HostsHeader,
  type ScheduleHeader,
} from '../schedule-file.js';
import { effectiveWarmupMs } from './effective-warmup-ms.js';
import { keepPlugins } from '../plugin-copies.js';
import type { LiveRun } from './live-run.js';
import type { ScheduleFaults } from './schedule-faults.js';
import { simulatedOf } from './simulated-of.js';

/** The run's SSH host settings as a bug keeps them: every path absolute, so a replay from anywhere finds them. */
function hostsHeader(c: RunConfig): HostsHeader {
  const path = (p: string | undefined) => (p === undefined ? {} : { privateKey: resolve(p) });
  return {
    hosts: (c.hosts ?? []).map((h) => ({ ...h, ...path(h.privateKey) })),
    sshUsername: c.sshUsername,
    sshPort: c.sshPort,
    ...(c.sshPrivateKey !== undefined ? { sshPrivateKey: resolve(c.sshPrivateKey) } : {}),
    strictHostKeyChecking: c.strictHostKeyChecking,
    ...(c.knownHosts !== undefined ? { knownHosts: resolve(c.knownHosts) } : {}),
  };
}

/**
 * Records a finding of the schedule as a bug: its row in the store, and a directory with the
 * schedule that replays it (every fault tried, under a header of how the run was set up), its
 * evidence and its page, if it has one. Said to the reporters.
 */
export function recordBug(
  live: LiveRun,
  scheduled: ScheduleFaults,
  finding: Finding,
  signature: string,
  hit: BugHit,
): void {
  const { config: c, plan, state, store, emit, parts } = live;
  const { schedule, faults, attempted } = scheduled;
  const seed = plan.seed;
  const simulated = simulatedOf(plan, c);
  const row = {
    schedule,
    kind: finding.kind,
    name: finding.name,
    message: finding.message,
    evidence: finding.evidence,
    faultSchedule: faults,
    seed,
    foundAtMs: hit.foundAtMs,
    signature,
    hits: [hit],
  };
  const id = store.bug(row);
  const dir = join(store.dir, 'bugs', String(id));
  mkdirSync(dir, { recursive: true });
  const warmupMs = effectiveWarmupMs(c);
  parts.checkpoints?.keepForBug(schedule);
  const checkpoint = parts.checkpoints?.has(schedule) ? parts.checkpoints.dirOf(schedule) : undefined;
  // `system` and `workload` are what a replay loads: the built-in name, or the module's absolute path.
  const header: { -readonly [K in keyof ScheduleHeader]: ScheduleHeader[K] } = {
    system: plan.source,
    nodes: plan.nodes.length,
    seed,
    bugs: c.bugs,
    ...(Object.keys(plan.settings).length > 0 ? { settings: plan.settings } : {}),
    ...(c.durability !== undefined ? { durability: c.durability } : {}),
    workload: plan.workload.source,
    ...(c.concurrency !== undefined ? { concurrency: c.concurrency } : {}),
    rate: c.rate,
    steps: c.steps,
    stepMs: c.stepMs,
    network: c.network,
    ...(warmupMs > 0 ? { warmupMs } : {}),
    schedule,
    finding: { kind: finding.kind, name: finding.name },
    ...(checkpoint !== undefined ? { checkpoint: relative(dir, checkpoint) } : {}),
    ...(c.hosts !== undefined ? { hosts: hostsHeader(c) } : {}),
    ...(simulated !== undefined ? { simulated } : {}),
    ...(simulated !== undefined ? simulatedCampaign(c) : {}),
  };
  const plugins = keepPlugins(dir, [
    { flag: 'system', source: plan.source },
    { flag: 'workload', source: plan.workload.source },
  ]);
  if (plugins.length > 0) header.plugins = plugins;
  writeFileSync(join(dir, BUG_SCHEDULE_FILE), formatBugSchedule(header, attempted));
  // A schedule that reacts to events replays only from its own text: keep it beside what it did.
  const source = c.schedule?.[schedule];
  if (source !== undefined) copyFileSync(source, join(dir, 'source-schedule.jsonl'));
  writeFileSync(join(dir, 'evidence.json'), JSON.stringify(finding.evidence, null, 2) + '\n');
  let html: string | undefined;
  if (finding.html !== undefined) {
    html = join(dir, 'check.html');
    writeFileSync(html, finding.html);
    store.setBugHtml(id, html);
  }
  const bug: BugRecord = {
    ...row,
    id,
    dir,
    ...(html !== undefined ? { html } : {}),
    ...(simulated !== undefined ? { simulated } : {}),
  };
  state.bugs.push(bug);
  emit('bug', bug);
}

/**
 * What a replay needs to re-run a simulated run's schedules before a bug's: the run's configuration,
 * when its policy chose every schedule from the run's own seed alone (not from fixed files, a
 * seeded policy or what an exchange brought: those are not in the bug's directory).
 */
function simulatedCampaign(c: RunConfig): { campaign?: Record<string, unknown> } {
  if (c.schedule !== undefined || c.exchange !== undefined || c.seedPolicyFrom !== undefined) return {};
  const own = new Set(['store', 'replayOf', 'checkpoint']);
  const campaign = Object.fromEntries(Object.entries(c).filter(([key]) => !own.has(key)));
  return { campaign: JSON.parse(JSON.stringify(campaign)) as Record<string, unknown> };
}
