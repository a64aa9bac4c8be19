import { existsSync } from 'node:fs';
import { join } from 'node:path';

import { HOST_DEFAULT_FAULT_FAMILIES, type RunConfig } from '../../campaign/config.js';
import { libraryProblem } from '../../cluster/built-program.js';
import { diskLayerNeedsOn } from '../../cluster/disk-layer.js';
import { diskLayerFixFor } from '../../cluster/disk-layer.js';
import type { ClusterView } from '../../cluster/node-system.js';
import { findLibfaketimeOn } from '../../cluster/clock-preload.js';
import { HOST_LIBFAKETIME_FIX } from '../../cluster/clock-preload.js';
import { connectSshHost, HostError, type SshHost, type SshTarget } from '../../cluster/runtime/ssh.js';
import { ScratchDir } from '../../cluster/scratch-dir.js';
import { checkingBinariesWith } from '../../systems/check-binary.js';
import type { SystemAdapter } from '../../systems/system.js';
import { configFromFlags, type RunFlags } from '../run.js';
import { isRunnableOn, readFileOn } from '../../cluster/runtime/files.js';

export { addHostOptions } from './host-options.js';

/** The host flags of a command other than run. */
export type HostFlags = Pick<
  RunFlags,
  'hosts' | 'username' | 'sshPrivateKey' | 'sshPort' | 'strictHostKeyChecking' | 'knownHosts'
>;

/** A run's config from the host flags alone (the rest `mallory run`'s defaults), checked as run checks them. */
export function runConfigOfHostFlags(flags: HostFlags, system: string): RunConfig {
  return configFromFlags({
    time: '60s',
    policy: 'adaptive',
    faults: HOST_DEFAULT_FAULT_FAMILIES.join(','),
    workload: 'register',
    bug: [],
    network: 'auto',
    hosts: flags.hosts,
    username: flags.username,
    sshPrivateKey: flags.sshPrivateKey,
    sshPort: flags.sshPort,
    strictHostKeyChecking: flags.strictHostKeyChecking,
    knownHosts: flags.knownHosts,
    system,
  } as unknown as RunFlags);
}

/** What one host has and lacks for a system's node. */
export interface HostDoctorRow {
  readonly host: string;
  readonly node: string;
  readonly ok: boolean;
  readonly has: readonly string[];
  readonly missing: readonly { readonly what: string; readonly fix?: string }[];
  /** What it lacks for faults a run has only when asked for (`--faults …,clock`): the host is ok without it. */
  readonly optional?: readonly { readonly what: string; readonly fix?: string }[];
  /**
   * What building and mounting the disk layer needs and the host lacks (empty: disk faults can run
   * there); absent when the host was not asked. Not a reason for `ok: false`: disk faults are asked for.
   */
  readonly disk?: readonly string[];
}

/** What every host runs for a node besides the node's own command (process groups, files, cleanup). */
const HOST_TOOLS = ['sh', 'setsid', 'kill', 'cut', 'find', 'rm', 'mkdir', 'mv', 'env'] as const;

/**
 * Connects to each host (all at once, each on its own) and asks it for what a run of `system`
 * needs there: SSH with SFTP, root (directly or `sudo -n`), the tools the run uses, `iptables`
 * (partitions), `tar` (checkpoints), the node's command as `launch` gives it, and the system's
 * own binary checks (`doctor()`), run on the host.
 */
export async function diagnoseHosts(
  targets: readonly SshTarget[],
  system: SystemAdapter,
  ports: Readonly<Record<string, number>>,
): Promise<HostDoctorRow[]> {
  const nodes = targets.map((_, i) => `n${i + 1}`);
  const scratchDir = new ScratchDir('doctor-hosts');
  const scratch = scratchDir.path;
  const address = (node: string, service: string): { host: string; port: number } => ({
    host: targets[nodes.indexOf(node)].host,
    port: ports[service] ?? 0,
  });
  const view: ClusterView = {
    nodes,
    members: nodes,
    runDir: scratch,
    // What launch writes for the check (a config) stays in the scratch dir, removed with it.
    dataDir: (node) => join(scratch, 'hosts', node),
    listen: address,
    dial: (_from, to, service) => address(to, service),
    clientAddress: address,
  };
  try {
    return await Promise.all(targets.map((target, i) => diagnoseHost(target, nodes[i], system, view)));
  } finally {
    scratchDir.dispose();
  }
}

async function diagnoseHost(
  target: SshTarget,
  node: string,
  system: SystemAdapter,
  view: ClusterView,
): Promise<HostDoctorRow> {
  const has: string[] = [];
  const missing: { what: string; fix?: string }[] = [];
  const optional: { what: string; fix?: string }[] = [];
  let disk: string[] | undefined;
  const done = (): HostDoctorRow => ({
    host: target.host,
    node,
    ok: missing.length === 0,
    has,
    missing,
    ...(optional.length > 0 ? { optional } : {}),
    ...(disk !== undefined ? { disk } : {}),
  });
  let runtime: SshHost;
  try {
    runtime = await connectSshHost(target);
  } catch (error) {
    if (!(error instanceof HostError)) throw error;
    // The reason says what to do already.
    missing.push({ what: error.message.replace(`host ${target.host}: `, '') });
    return done();
  }
  try {
    has.push(`ssh as ${target.username}`, runtime.sudo ? 'root through sudo -n' : 'root');
    try {
      await readFileOn(runtime, '/proc/version');
      has.push('sftp');
    } catch (error) {
      missing.push({
        what: `sftp (${(error as Error).message})`,
        fix: 'enable the SFTP subsystem in sshd_config (Subsystem sftp …)',
      });
    }
    const tools = await Promise.all(HOST_TOOLS.map((t) => isRunnableOn(runtime, t)));
    const lacking = HOST_TOOLS.filter((_, i) => !tools[i]);
    if (lacking.length === 0) has.push(HOST_TOOLS.join(' '));
    else missing.push({ what: lacking.join(' '), fix: 'apt-get install -y coreutils util-linux findutils' });
    if (await isRunnableOn(runtime, 'iptables')) has.push('iptables');
    else missing.push({ what: 'iptables (partitions)', fix: 'apt-get install -y iptables' });
    if (await isRunnableOn(runtime, 'tar')) has.push('tar');
    else
      missing.push({ what: 'tar (checkpoints)', fix: 'apt-get install -y tar, or run with --checkpoints 0' });
    if (system.clockFaults === true) {
      const libfaketime = await findLibfaketimeOn(runtime);
      if (libfaketime !== undefined) has.push(`libfaketime ${libfaketime} (clock faults)`);
      else optional.push({ what: 'libfaketime (clock faults)', fix: HOST_LIBFAKETIME_FIX });
    }
    disk = await diskLayerNeedsOn(runtime);
    const spec = await Promise.resolve(system.launch(node, view, { join: false }));
    if (spec.built === true) {
      // Built here and copied at start: the system's doctor() is about the build, on this machine.
      if (!existsSync(spec.command)) {
        has.push(`${node}'s program built here at the run's start and copied (its libraries checked then)`);
        return done();
      }
      const problem = await libraryProblem(runtime, node, spec);
      if (problem) missing.push(problem);
      else has.push(`the libraries of ${node}'s program ${spec.command} (built here, copied at start)`);
      return done();
    }
    if (await isRunnableOn(runtime, spec.command)) {
      const problem = await libraryProblem(runtime, node, spec);
      if (problem) missing.push(problem);
      else has.push(`${node}'s command ${spec.command}`);
    } else {
      missing.push({
        what: `${node}'s command ${spec.command}`,
        fix: 'install it on the host at that path',
      });
    }
    const findings = await checkingBinariesWith(
      (argv, timeoutMs) => runtime.exec(argv, { timeoutMs }),
      () => system.doctor(),
    );
    for (const finding of findings) {
      if (finding.ok) has.push(finding.what);
      else
        missing.push(
          finding.fix === undefined ? { what: finding.what } : { what: finding.what, fix: finding.fix },
        );
    }
  } finally {
    await runtime.close();
  }
  return done();
}

/** Whether disk faults can run on the host, and what it lacks for them if not. */
function diskClause(disk: readonly string[] | undefined): string {
  if (disk === undefined) return '';
  if (disk.length === 0) return '; disk faults: yes';
  return `; disk faults: no, lacks ${disk.join(', ')} (fix: ${diskLayerFixFor(disk)})`;
}

/**
 * One line per host: what it lacks and how to fix it, else what it has; whether disk faults can run
 * there; then what only other asked-for faults need.
 */
export function formatHostRows(rows: readonly HostDoctorRow[]): string {
  const said = (items: readonly { readonly what: string; readonly fix?: string }[]): string =>
    items.map((m) => (m.fix === undefined ? m.what : `${m.what} (fix: ${m.fix})`)).join('; ');
  return rows
    .map(
      (r) =>
        (r.ok
          ? `ok       host ${r.host} (${r.node}): ${r.has.join(', ')}`
          : `MISSING  host ${r.host} (${r.node}): ${said(r.missing)}`) +
        diskClause(r.disk) +
        (r.optional !== undefined && r.optional.length > 0 ? ` — without: ${said(r.optional)}` : ''),
    )
    .join('\n');
}
