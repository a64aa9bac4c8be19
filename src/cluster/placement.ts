import type { DockerEndpoint } from './runtime/docker-command.js';
import { DOCKER_CAPABILITIES } from './runtime/docker.js';
import { LOCAL_CAPABILITIES } from './runtime/local.js';
import type { RuntimeCapabilities } from './runtime/runtime.js';
import { SSH_CAPABILITIES, type SshTarget } from './runtime/ssh.js';

/** The nodes on this machine, each a process group of the fuzzer's, on namespaces or proxies. */
export interface LocalPlacement {
  readonly kind: 'local';
  /** Network namespaces (root), else a proxy per link. */
  readonly netns: boolean;
  /** libfaketime's path here, when the run has clock faults. */
  readonly libfaketime?: string | undefined;
  /** The FUSE disk layer's binary, built here, when the run has disk faults. */
  readonly diskLayerBinary?: string | undefined;
}

/** One node per host reached over SSH (`--hosts`). */
export interface SshPlacement {
  readonly kind: 'ssh';
  /** Node i runs on host i. */
  readonly targets: readonly SshTarget[];
  /** Node → libfaketime's path on its host, when the run has clock faults. */
  readonly libfaketime?: Readonly<Record<string, string>> | undefined;
  /** Disk faults: the layer is built and mounted on each host. */
  readonly disk: boolean;
}

/** One node per container of an image (`--hosts docker:IMAGE`). */
export interface DockerPlacement {
  readonly kind: 'docker';
  readonly image: string;
  readonly endpoint: DockerEndpoint;
}

/** The nodes in a simulated world in this process, on virtual time (`--sim`). */
export interface SimPlacement {
  readonly kind: 'sim';
  /** What the world's disks keep at a crash (`src/sim/disk.ts`). */
  readonly contract: 'C1' | 'C2' | 'C3';
}

/**
 * Where a run's nodes run, as one value chosen once from the flags (`planRun`): the runtime and
 * the network are built from it, and nothing after asks where a node is, only what its runtime
 * can do.
 */
export type Placement = LocalPlacement | SshPlacement | DockerPlacement | SimPlacement;

/**
 * A simulated world: its network delays and duplicates, its nodes join and leave; no clock
 * preload or FUSE layer (the world's own clock and disk faults are not families yet), no data dirs
 * to copy to a checkpoint.
 */
const SIM_CAPABILITIES: RuntimeCapabilities = {
  sharedFilesystem: true,
  sharedClock: true,
  netem: true,
  fuse: false,
  libfaketime: false,
  checkpoints: false,
  membership: true,
  commandLeadsGroup: true,
};

const CAPABILITIES: Readonly<Record<Placement['kind'], RuntimeCapabilities>> = {
  local: LOCAL_CAPABILITIES,
  ssh: SSH_CAPABILITIES,
  docker: DOCKER_CAPABILITIES,
  sim: SIM_CAPABILITIES,
};

/** What the runtime of a placement can do, known before it is built (checked before the run). */
export function capabilitiesOf(kind: Placement['kind']): RuntimeCapabilities {
  return CAPABILITIES[kind];
}

/** Whether the run's nodes get the disk layer (disk faults), wherever they run. */
export function hasDiskLayer(placement: Placement): boolean {
  return (
    (placement.kind === 'local' && placement.diskLayerBinary !== undefined) ||
    (placement.kind === 'ssh' && placement.disk)
  );
}
