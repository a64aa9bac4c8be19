import type { Op, ProcessId } from '../../core/op.js';
import { HistoryError } from '../history/history-error.js';
import type { Model } from '../model.js';
import { FAILED, INFO, OK, Partition, type PartitionKey } from './partition.js';

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
  private readonly open = new Map<ProcessId, Open>();
  private position = 0;
  ops = 0;

  constructor(private readonly model: Model) {}

  add(op: Op): void {
    const position = this.position++;
    if (op.process === 'nemesis') return;
    if (op.type === 'invoke') {
      const already = this.open.get(op.process);
      if (already !== undefined)
        this.fail(
          op,
          position,
          `the process's op ${already.index} is still open: a process runs one op at a time`,
        );
      let key: PartitionKey | undefined;
      let input: unknown;
      try {
        key = this.model.partitionKey?.(op.f, op.value);
        input = this.model.input(op.f, op.value);
      } catch (error) {
        this.fail(op, position, error instanceof Error ? error.message : String(error));
      }
      let partition = this.byKey.get(key);
      if (partition === undefined) {
        partition = new Partition(key);
        this.byKey.set(key, partition);
      }
      this.open.set(op.process, { partition, slot: partition.invoke(input, position), index: op.index });
      return;
    }
    const open = this.open.get(op.process);
    if (open === undefined)
      return this.fail(op, position, 'it completes no invoke: the process has no open op');
    this.open.delete(op.process);
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

  private fail(op: Op, position: number, message: string): never {
    throw new HistoryError(
      `op ${op.index} (process ${op.process}, ${op.type} ${op.f}): ${message}`,
      position,
    );
  }

  /** The partitions, in the order their first op appeared. Open invokes count as `info`. */
  finish(): Partition[] {
    this.ops += this.open.size;
    this.open.clear();
    return [...this.byKey.values()];
  }
}
