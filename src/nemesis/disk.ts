import type { DiskLayer } from '../cluster/disk-layer.js';

/** A node's disk as the nemesis left it: the modes it turned on, and whether it lost its unfsynced writes. */
interface NodeDisk {
  fsyncError: boolean;
  full: boolean;
  slowMs: number;
  /** Killed and rolled back by `lose-unfsynced`: `heal-disk` starts it again. */
  lost: boolean;
}

/**
 * The nodes' disks as the nemesis sets them, through each node's FUSE layer: unfsynced writes
 * dropped, fsync failing, reads and writes slowed, writes refused as if the disk were full.
 * Healthy disks have no entry.
 */
export class NodeDisks {
  private readonly disks = new Map<string, NodeDisk>();

  constructor(private readonly layer: Pick<DiskLayer, 'command' | 'isMounted'>) {}

  /** Nodes whose disk is faulted or that lost writes since the last heal. */
  get faulted(): readonly string[] {
    return [...this.disks.keys()];
  }

  /** Drops what each node wrote and did not fsync. The nodes' processes must be dead. */
  async loseUnfsynced(nodes: readonly string[]): Promise<void> {
    for (const node of nodes) {
      if (this.layer.isMounted(node)) await this.layer.command(node, 'drop-unfsynced');
      this.disk(node).lost = true;
    }
  }

  async fsyncError(nodes: readonly string[]): Promise<void> {
    for (const node of nodes) {
      await this.send(node, 'fsync-error on');
      this.disk(node).fsyncError = true;
    }
  }

  async full(nodes: readonly string[]): Promise<void> {
    for (const node of nodes) {
      await this.send(node, 'full on');
      this.disk(node).full = true;
    }
  }

  async slow(nodes: readonly string[], delayMs: number): Promise<void> {
    for (const node of nodes) {
      await this.send(node, `slow ${Math.round(delayMs)}`);
      this.disk(node).slowMs = delayMs;
    }
  }

  /**
   * Turns every mode off on the nodes' disks (every faulted node's when `nodes` is absent); returns
   * the nodes among them that lost their unfsynced writes, for the caller to start again.
   */
  async heal(nodes: readonly string[] = this.faulted): Promise<string[]> {
    const lost: string[] = [];
    for (const node of nodes) {
      const disk = this.disks.get(node);
      if (!disk) continue;
      if (disk.fsyncError) await this.send(node, 'fsync-error off');
      if (disk.full) await this.send(node, 'full off');
      if (disk.slowMs > 0) await this.send(node, 'slow 0');
      if (disk.lost) lost.push(node);
      this.disks.delete(node);
    }
    return lost;
  }

  private async send(node: string, line: string): Promise<void> {
    if (!this.layer.isMounted(node)) throw new Error(`${node} has no disk layer (it has not started yet)`);
    await this.layer.command(node, line);
  }

  private disk(node: string): NodeDisk {
    let disk = this.disks.get(node);
    if (!disk) {
      disk = { fsyncError: false, full: false, slowMs: 0, lost: false };
      this.disks.set(node, disk);
    }
    return disk;
  }
}
