import { NAMESPACE_PREFIX, NetnsBackend } from '../cluster/net/netns.js';
import { run } from '../core/exec.js';
import { ResourceRegistry } from '../cluster/resources.js';
import { DISK_LAYER_FIX, diskLayerNeeds } from '../cluster/disk-layer.js';
import { SYSTEMS } from '../systems/index.js';
import { describeSettings } from '../systems/settings.js';
import { loadSystem } from '../systems/load-system.js';
import type { SystemDefinition } from '../systems/system.js';
import { hostTargets } from '../campaign/plan-hosts.js';
import { servicePorts } from '../campaign/create-run.js';
import {
  addHostOptions,
  diagnoseHosts,
  formatHostRows,
  runConfigOfHostFlags,
} from './_internals/doctor-hosts.js';
import type { RegisterCommand } from './command.js';
import type { RunFlags } from './run.js';

/** One line of the doctor's table. `optional` is informative: nothing fails without it. */
export interface DoctorRow {
  readonly status: 'ok' | 'missing' | 'optional';
  readonly area: string;
  readonly what: string;
  readonly fix?: string;
}

const NODE_MAJOR_MIN = 20;

function row(ok: boolean, area: string, what: string, fix?: string): DoctorRow {
  return ok || fix === undefined
    ? { status: ok ? 'ok' : 'missing', area, what }
    : { status: 'missing', area, what, fix };
}

async function tool(area: string, argv: readonly string[], pkg: string): Promise<DoctorRow> {
  const result = await run(argv);
  const first =
    (result.stdout || result.stderr)
      .split('\n')
      .find((l) => l.trim() !== '')
      ?.trim() ?? '';
  return result.code === 0 || (first !== '' && !/ENOENT|not found/.test(first))
    ? row(true, area, first)
    : row(false, area, `\`${argv[0]}\` not found`, `apt-get install -y ${pkg}`);
}

/** Tries what the namespace backend does, in a throwaway namespace recorded for `mallory cleanup`. */
async function namespaceChecks(): Promise<DoctorRow[]> {
  const rows: DoctorRow[] = [];
  const name = `${NAMESPACE_PREFIX}doctor-${process.pid}`;
  const registry = new ResourceRegistry(`doctor-${process.pid}`);
  let netem = false;
  try {
    registry.record({ kind: 'netns', name });
    const add = await run(['ip', 'netns', 'add', name]);
    if (add.code !== 0) {
      rows.push(
        row(false, 'netns', `cannot create a network namespace: ${add.stderr.trim()}`, 'run as root'),
      );
      return rows;
    }
    rows.push(row(true, 'netns', 'network namespaces can be created'));
    const veth = await run([
      'ip',
      '-n',
      name,
      'link',
      'add',
      'veth-a',
      'type',
      'veth',
      'peer',
      'name',
      'veth-b',
    ]);
    const bridge = await run(['ip', '-n', name, 'link', 'add', 'br0', 'type', 'bridge']);
    rows.push(
      row(
        veth.code === 0 && bridge.code === 0,
        'netns',
        veth.code === 0 && bridge.code === 0
          ? 'veth pairs and bridges work'
          : `veth/bridge: ${veth.stderr}${bridge.stderr}`.trim(),
        'a kernel with veth and bridge support (modprobe veth bridge)',
      ),
    );
    const exec = ['ip', 'netns', 'exec', name];
    const loss = await run([
      ...exec,
      'iptables',
      '-A',
      'INPUT',
      '-m',
      'statistic',
      '--mode',
      'random',
      '--probability',
      '0.5',
      '-j',
      'DROP',
    ]);
    rows.push(
      row(
        loss.code === 0,
        'iptables',
        loss.code === 0 ? 'DROP and statistic (cuts, loss) work in a namespace' : loss.stderr.trim(),
        'apt-get install -y iptables',
      ),
    );
    const redirect = await run([
      ...exec,
      'iptables',
      '-t',
      'nat',
      '-A',
      'OUTPUT',
      '-p',
      'tcp',
      '-m',
      'owner',
      '!',
      '--gid-owner',
      '1',
      '-j',
      'REDIRECT',
      '--to-ports',
      '1',
    ]);
    rows.push(
      row(
        redirect.code === 0,
        'iptables',
        redirect.code === 0 ? 'nat REDIRECT with owner match (delay proxy) works' : redirect.stderr.trim(),
        'apt-get install -y iptables',
      ),
    );
    const tee = await run([
      ...exec,
      'iptables',
      '-t',
      'mangle',
      '-A',
      'POSTROUTING',
      '-j',
      'TEE',
      '--gateway',
      '127.0.0.1',
    ]);
    rows.push(
      tee.code === 0
        ? row(true, 'iptables', 'TEE (packet duplication) works')
        : {
            status: 'optional',
            area: 'iptables',
            what: `TEE unavailable, packet duplication faults will fail: ${tee.stderr.trim()}`,
            fix: 'modprobe xt_TEE',
          },
    );
    netem = await NetnsBackend.netemAvailable(`${name}-netem`, registry);
  } finally {
    registry.releaseAll();
  }
  rows.push(
    netem
      ? row(true, 'netem', 'tc netem works: delay uses netem')
      : {
          status: 'optional',
          area: 'netem',
          what: 'no netem in this kernel: delay uses the userspace delay proxy instead',
          fix: 'apt-get install -y linux-modules-extra-$(uname -r) && modprobe sch_netem',
        },
  );
  return rows;
}

/** Disk faults (`--faults disk`): optional, for the systems that take them. */
async function diskLayerRow(systems: readonly string[]): Promise<DoctorRow> {
  const { missing } = await diskLayerNeeds();
  const what = `disk faults (the FUSE disk layer, for ${systems.join(', ')})`;
  if (missing.length === 0) return { status: 'ok', area: 'disk', what };
  return {
    status: 'optional',
    area: 'disk',
    what: `${what}: missing ${missing.join(', ')}`,
    fix: missing.includes('/dev/fuse') ? `modprobe fuse; ${DISK_LAYER_FIX}` : DISK_LAYER_FIX,
  };
}

/**
 * Everything `mallory` can check about this machine, with the binaries of `systems` (by name;
 * default: every built-in system).
 */
export async function diagnose(
  systems: Readonly<Record<string, SystemDefinition>> = SYSTEMS,
): Promise<DoctorRow[]> {
  const rows: DoctorRow[] = [];
  const major = Number(process.versions.node.split('.')[0]);
  rows.push(
    row(
      major >= NODE_MAJOR_MIN,
      'node',
      `Node.js ${process.versions.node}`,
      `install Node.js ${NODE_MAJOR_MIN} or newer`,
    ),
  );
  const root = process.getuid?.() === 0;
  rows.push(
    row(
      root,
      'root',
      root
        ? 'running as root: the namespace backend (--network netns) is available'
        : 'not root: only the proxy backend (--network proxy) works',
      'run as root (sudo) for network namespaces',
    ),
  );
  rows.push(await tool('ip', ['ip', '-V'], 'iproute2'));
  rows.push(await tool('iptables', ['iptables', '-V'], 'iptables'));
  rows.push(await tool('tcpdump', ['tcpdump', '--version'], 'tcpdump'));
  rows.push(await tool('ss', ['ss', '-V'], 'iproute2'));
  if (root) rows.push(...(await namespaceChecks()));
  const takingDisk: string[] = [];
  for (const [name, definition] of Object.entries(systems)) {
    const adapter = definition.create({ bugs: [] });
    if (adapter.diskFaults === true) takingDisk.push(name);
    for (const finding of await adapter.doctor()) {
      rows.push(row(finding.ok, `system ${name}`, finding.what, finding.fix));
    }
    const settings = Object.keys(definition.settings ?? {});
    if (settings.length > 0) {
      rows.push(row(true, `system ${name}`, `settings (--set): ${describeSettings(definition)}`));
    }
  }
  if (takingDisk.length > 0) rows.push(await diskLayerRow(takingDisk));
  return rows;
}

const STATUS_LABEL: Readonly<Record<DoctorRow['status'], string>> = {
  ok: 'ok',
  missing: 'MISSING',
  optional: 'optional',
};

export function formatRows(rows: readonly DoctorRow[]): string {
  const statusWidth = Math.max(...rows.map((r) => STATUS_LABEL[r.status].length));
  const areaWidth = Math.max(...rows.map((r) => r.area.length));
  return rows
    .map((r) => {
      const line = `${STATUS_LABEL[r.status].padEnd(statusWidth)}  ${r.area.padEnd(areaWidth)}  ${r.what}`;
      return r.fix !== undefined ? `${line}\n${' '.repeat(statusWidth + areaWidth + 4)}fix: ${r.fix}` : line;
    })
    .join('\n');
}

/**
 * `mallory doctor`: what this machine can do, and the exact command that fixes what is missing.
 * Exit status 0 when nothing is missing (optional rows such as netem do not count), 2 otherwise
 * (an environment error, as for every command), so scripts can gate on it.
 */
export const registerDoctor: RegisterCommand = (program, setExit) => {
  const command = program
    .command('doctor')
    .description(
      'check this machine (root, namespaces, iptables, tcpdump, netem, each system’s binaries), or with --hosts each host',
    )
    .option(
      '--system <name|path>',
      'check only this system’s binaries: a built-in or the path of a system module (with --hosts: the system to run there, default kvraft)',
    )
    .option('--json', 'print the findings as one JSON document on stdout');
  addHostOptions(command).action(async (flags: DoctorFlags) => {
    if (flags.hosts !== undefined) {
      setExit(await doctorHosts(flags));
      return;
    }
    const only = flags.system === undefined ? undefined : (await loadSystem(flags.system)).definition;
    const rows = await diagnose(only === undefined ? SYSTEMS : { [only.name]: only });
    const missing = rows.filter((r) => r.status === 'missing');
    if (flags.json) process.stdout.write(JSON.stringify({ ok: missing.length === 0, rows }, null, 2) + '\n');
    else {
      process.stdout.write(formatRows(rows) + '\n');
      process.stdout.write(
        missing.length === 0
          ? 'mallory doctor: everything needed is here\n'
          : `mallory doctor: ${missing.length} missing — run the fix commands above\n`,
      );
    }
    setExit(missing.length === 0 ? 0 : 2);
  });
};

type DoctorFlags = Pick<
  RunFlags,
  | 'system'
  | 'json'
  | 'hosts'
  | 'username'
  | 'sshPrivateKey'
  | 'sshPort'
  | 'strictHostKeyChecking'
  | 'knownHosts'
>;

/** `mallory doctor --hosts …`: one line per host; 2 when a host lacks something. */
async function doctorHosts(flags: DoctorFlags): Promise<number> {
  const config = runConfigOfHostFlags(flags, flags.system ?? 'kvraft');
  const targets = hostTargets(config);
  const { definition } = await loadSystem(config.system);
  const system = definition.create({ bugs: [], nodes: targets.length });
  const rows = await diagnoseHosts(targets, system, servicePorts(system));
  const lacking = rows.filter((r) => !r.ok).length;
  if (flags.json) {
    process.stdout.write(
      JSON.stringify({ ok: lacking === 0, system: config.system, hosts: rows }, null, 2) + '\n',
    );
  } else {
    process.stdout.write(formatHostRows(rows) + '\n');
    process.stdout.write(
      lacking === 0
        ? `mallory doctor: every host has what ${config.system} needs\n`
        : `mallory doctor: ${lacking} of ${rows.length} hosts lack something — see the fixes above\n`,
    );
  }
  return lacking === 0 ? 0 : 2;
}
