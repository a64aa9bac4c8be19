import { type Clock, realClock } from '../core/clock.js';
import type { Event } from '../core/event.js';
import type { Op, OpType, ProcessId } from '../core/op.js';

/**
 * The run's history: numbers ops, stamps them with ns since the run started, writes each one out
 * as it happens (`sink`), and keeps the current schedule's ops for checking.
 */
export class History {
  private index = 0;
  private current: Op[] = [];
  private readonly listeners: ((op: Op, event: Event) => void)[] = [];

  constructor(
    readonly startNs: number,
    private readonly sink: (op: Op) => void,
    /** The clock ops are stamped by, and the workload's waits read (default the host's). */
    readonly clock: Clock = realClock,
  ) {}

  /** ns since the run started, on the run's monotonic clock. */
  now(): number {
    return this.clock.monoNs() - this.startNs;
  }

  onOp(listener: (op: Op, event: Event) => void): void {
    this.listeners.push(listener);
  }

  record(fields: {
    type: OpType;
    process: ProcessId;
    f: string;
    value: unknown;
    node?: string | undefined;
    error?: string | undefined;
    final?: true | undefined;
    served?: string | undefined;
  }): Op {
    const time = this.now();
    const op: Op = {
      index: this.index++,
      time,
      type: fields.type,
      process: fields.process,
      f: fields.f,
      value: fields.value,
      ...(fields.node !== undefined ? { node: fields.node } : {}),
      ...(fields.error !== undefined ? { error: fields.error } : {}),
      ...(fields.final === true ? { final: true as const } : {}),
      ...(fields.served !== undefined ? { served: fields.served } : {}),
    };
    this.current.push(op);
    this.sink(op);
    const event: Event = {
      ts: this.startNs + time,
      node: fields.node ?? (fields.process === 'nemesis' ? 'nemesis' : 'client'),
      source: fields.process === 'nemesis' ? 'nemesis' : 'client',
      type: `${fields.f}:${fields.type}`,
    };
    for (const listener of this.listeners) listener(op, event);
    return op;
  }

  /** The ops since the last call (one schedule's history), and starts a new segment. */
  takeSegment(): Op[] {
    const ops = this.current;
    this.current = [];
    return ops;
  }

  get count(): number {
    return this.index;
  }
}
