/** One line of `history.jsonl`, in the shape of a Jepsen history op. */
export type OpType = 'invoke' | 'ok' | 'fail' | 'info';

/** A client worker id, or `nemesis` for fault ops. */
export type ProcessId = number | 'nemesis';

export interface Op {
  readonly index: number;
  /** ns since the run started */
  readonly time: number;
  readonly type: OpType;
  readonly process: ProcessId;
  readonly f: string;
  readonly value: unknown;
  readonly node?: string;
  readonly error?: string;
}

/** Key-value register ops: `value` is `[key, v]`; cas carries `[key, [old, new]]`. */
export type KvF = 'read' | 'write' | 'cas';
export type KvValue = readonly [key: string, v: number | null | readonly [number, number]];

export function isClientOp(op: Op): op is Op & { process: number } {
  return op.process !== 'nemesis';
}
