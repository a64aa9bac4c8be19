import type { DiskLayer } from '../cluster/disk-layer.js';
import type { DiskFault } from './disk.js';
import { simDataDir } from './kvraft.js';
import type { World } from './world.js';

/** The disk kinds the simulated disk does not do (a slow disk needs CPU time, which is zero here). */
export const SIM_LACKS_DISK_KINDS = ['slow-disk'] as const;

/**
 * The simulated disks as the disk nemesis (`NodeDisks`) drives the FUSE layer: the same command
 * lines, answered by the world's own events. `drop-unfsynced` and `torn-write SEED sector|byte`
 * crash the host's disk under the run's storage contract (C1 keeps every completed write, so
 * nothing is lost or torn there); `fsync-error on|off` makes fsyncs answer EIO, `full on|off`
 * writes answer ENOSPC, as kvraft's fail-stop expects of a real disk.
 */
export class SimDiskLayer implements Pick<DiskLayer, 'command' | 'isMounted'> {
  private readonly modes = new Map<string, { fsyncError: boolean; full: boolean }>();

  constructor(private readonly world: World) {}

  /** A host's simulated disk is there from the start (and kept across its process's incarnations). */
  isMounted(): boolean {
    return true;
  }

  command(node: string, line: string): Promise<string> {
    const [verb = '', arg = '', cut = 'sector'] = line.trim().split(/\s+/);
    const mode = this.modes.get(node) ?? { fsyncError: false, full: false };
    if (verb === 'drop-unfsynced') {
      this.world.crashDisk(node);
      return Promise.resolve('ok');
    }
    if (verb === 'torn-write') {
      const seed = Number(arg);
      if (!Number.isInteger(seed) || (cut !== 'sector' && cut !== 'byte'))
        return Promise.reject(new Error(`simulated disk: bad command "${line}"`));
      this.world.crashDisk(node, { seed, cut, root: simDataDir(node) });
      return Promise.resolve('ok');
    }
    if ((verb === 'fsync-error' || verb === 'full') && (arg === 'on' || arg === 'off')) {
      if (verb === 'fsync-error') mode.fsyncError = arg === 'on';
      else mode.full = arg === 'on';
      this.modes.set(node, mode);
      const faults: DiskFault[] = [
        ...(mode.fsyncError ? [{ op: 'fsync', code: 'EIO' } as const] : []),
        ...(mode.full ? [{ op: 'write', code: 'ENOSPC' } as const] : []),
      ];
      this.world.setDiskFaults(node, faults);
      return Promise.resolve('ok');
    }
    if (verb === 'slow' && Number(arg) === 0) return Promise.resolve('ok');
    return Promise.reject(
      new Error(`simulated disk: "${line}" is not simulated (${SIM_LACKS_DISK_KINDS.join(', ')} is not)`),
    );
  }
}
