import type { Op, ProcessId } from '../../core/op.js';
import { HistoryError } from '../history/history-error.js';
import type { Model } from '../model.js';
import { FAILED, INFO, OK, Partition, type PartitionKey } from './partition.js';

/** Processes up to this one have their open invoke in an array (Jepsen's are small ints). */
const MAX_LISTED_PROCESS = 1 << 16;

interface Open {
  readonly partition: Partition;
  readonly slot: number;
  readonly index: number;
}

/**
 * Pairs invokes with completions by process and files each op under its partition, one op at a
 * time, so a history can be streamed. Nemesis ops are skipped; `fail` ops are dropped (they did not
 * happen); an invoke never completed is treated as `info`.
 */
export class HistoryBuilder {
  private readonly byKey = new Map<PartitionKey | undefined, Partition>();
  /** The partition of the last invoke: histories often have one key, or runs of one. */
  private lastPartition: Partition | undefined;
  /** Open invokes of processes 0 to MAX_LISTED_PROCESS, by process: faster than a map. */
  private readonly openListed: (Open | undefined)[] = [];
  /** Open invokes of other processes. */
  private readonly openOthers = new Map<ProcessId, Open>();
  private openCount = 0;
  private position = 0;
  ops = 0;

  /**
   * `expectedEntries`: how many history entries are coming, when known: the one partition of a
   * model without keys then gets room for them all at once.
   */
  constructor(
    private readonly model: Model,
    private readonly expectedEntries?: number,
  ) {}

  add(op: Op): void {
    const position = this.position++;
    const process = op.process;
    if (process === 'nemesis') return;
    const listed = Number.isInteger(process) && process >= 0 && process <= MAX_LISTED_PROCESS;
    const open = listed ? this.openListed[process] : this.openOthers.get(process);
    if (op.type === 'invoke') {
      if (open !== undefined)
        this.fail(
          op,
          position,
          `the process's op ${open.index} is still open: a process runs one op at a time`,
        );
      let key: PartitionKey | undefined;
      let input: unknown;
      try {
        key = this.model.partitionKey?.(op.f, op.value);
        input = this.model.input(op.f, op.value);
      } catch (error) {
        this.fail(op, position, error instanceof Error ? error.message : String(error));
      }
      const partition = this.partitionOf(key);
      const opened: Open = { partition, slot: partition.invoke(input, position), index: op.index };
      if (listed) this.openListed[process] = opened;
      else this.openOthers.set(process, opened);
      this.openCount++;
      return;
    }
    if (open === undefined)
      return this.fail(op, position, 'it completes no invoke: the process has no open op');
    if (listed) this.openListed[process] = undefined;
    else this.openOthers.delete(process);
    this.openCount--;
    switch (op.type) {
      case 'ok': {
        let output: unknown;
        try {
          output = this.model.output(op.f, op.value);
        } catch (error) {
          this.fail(op, position, error instanceof Error ? error.message : String(error));
        }
        open.partition.complete(open.slot, OK, output, position);
        this.ops++;
        return;
      }
      case 'info':
        open.partition.complete(open.slot, INFO, undefined, position);
        this.ops++;
        return;
      case 'fail':
        open.partition.complete(open.slot, FAILED, undefined, position);
        return;
      default:
        this.fail(op, position, `unknown type: use invoke, ok, fail or info`);
    }
  }

  private partitionOf(key: PartitionKey | undefined): Partition {
    const last = this.lastPartition;
    if (last !== undefined && last.key === key) return last;
    let partition = this.byKey.get(key);
    if (partition === undefined) {
      partition =
        this.model.partitionKey === undefined && this.expectedEntries !== undefined
          ? new Partition(key, this.expectedEntries)
          : new Partition(key);
      this.byKey.set(key, partition);
    }
    this.lastPartition = partition;
    return partition;
  }

  private fail(op: Op, position: number, message: string): never {
    throw new HistoryError(
      `op ${op.index} (process ${op.process}, ${op.type} ${op.f}): ${message}`,
      position,
    );
  }

  /** The partitions, in the order their first op appeared. Open invokes count as `info`. */
  finish(): Partition[] {
    this.ops += this.openCount;
    this.openCount = 0;
    this.openListed.length = 0;
    this.openOthers.clear();
    return [...this.byKey.values()];
  }
}
