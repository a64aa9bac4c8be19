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
  /**
   * On a completion: the node that answered, when the client followed the leader away from its own
   * `node` (a Redis client sent by Sentinel to the primary). Absent: `node` answered, or nothing
   * says which did.
   */
  readonly served?: string;
  readonly error?: string;
  /**
   * A final read (on its invocation and completion; Jepsen's `:final? true`): read once the faults
   * were healed, the reset's nemesis ops written and the nodes had caught up, so it is checked as
   * linearizable whatever the system declares its reads promise (`readConsistency`): it must see
   * every acknowledged write.
   */
  readonly final?: true;
}

/** Key-value register ops: `value` is `[key, v]`; cas carries `[key, [old, new]]`. */
export type KvF = 'read' | 'write' | 'cas';
export type KvValue = readonly [key: string, v: number | null | readonly [number, number]];

export function isClientOp(op: Op): op is Op & { process: number } {
  return op.process !== 'nemesis';
}

/** A client op's invocation with its completion; `completion` is absent when none came. */
export interface OpPair {
  readonly invoke: Op;
  readonly completion: Op | undefined;
}

/**
 * Pairs each client invocation with its completion (by process, in history order), in the order
 * the completions come; invocations never completed follow, in invocation order. Nemesis ops and
 * completions without an open invocation are left out.
 */
export function pairOps(ops: readonly Op[]): OpPair[] {
  const open = new Map<ProcessId, Op>();
  const pairs: OpPair[] = [];
  for (const op of ops) {
    if (op.process === 'nemesis') continue;
    if (op.type === 'invoke') {
      open.set(op.process, op);
      continue;
    }
    const invoke = open.get(op.process);
    if (invoke === undefined) continue;
    open.delete(op.process);
    pairs.push({ invoke, completion: op });
  }
  for (const invoke of open.values()) pairs.push({ invoke, completion: undefined });
  return pairs;
}
