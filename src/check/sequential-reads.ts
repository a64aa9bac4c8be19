import type { Op } from '../core/op.js';

/**
 * What a system promises for its reads: `linearizable` (the default), or `sequential` — reads served
 * without a sync (by a follower, from a replica's own state) may return an earlier state of the key,
 * never one older than the state its process's own last update (write or cas) of that key that took
 * effect left (sequential consistency keeps each process's own order), and never one written after
 * the read returned. Updates stay linearizable.
 *
 * A sequentially consistent register always passes (its reads follow their process's own updates),
 * so do stale follower reads; an acknowledged write that is lost still fails: a later update (cas)
 * of anyone cannot be placed, or its writer reads a state from before it.
 * The search sees each read moved back to its process's last update's invocation (`relaxReads`);
 * `findNonMonotonicReads` checks beside it, where real time orders the writes, that each process's
 * reads of a key do not go back, neither behind an earlier read nor behind its own last update.
 * Where real time leaves open whether a write came before or after the process's own update, the
 * read may return it: placing the read after its own update in the search would also flag a system
 * whose read returns that update's value after a concurrent write ordered later overwrote it (a
 * follower that has applied one and not the other), which sequential consistency allows.
 */
export type ReadConsistency = 'linearizable' | 'sequential';
export const READ_CONSISTENCIES: readonly ReadConsistency[] = ['linearizable', 'sequential'];

/** The key of a key-value op (`[key, v]`), or undefined for single-register ops. */
function keyOf(op: Op): unknown {
  return Array.isArray(op.value) ? (op.value as unknown[])[0] : undefined;
}

function keyId(key: unknown): string {
  return typeof key === 'bigint' ? `${key}n` : (JSON.stringify(key) ?? 'undefined');
}

/**
 * The history with every read's invocation (but final reads': see `Op.final`) moved back to just after the invocation of its process's
 * last update of the same key (the start of the history when there is none), so the search may place
 * it anywhere from there to its return. Each moved read gets a process of its own (a negative id:
 * it now overlaps its process's other ops). `origin[i]` is the op of `ops` that line `i` stands for.
 */
export function relaxReads(ops: readonly Op[]): { readonly ops: Op[]; readonly origin: Op[] } {
  /** Sort key per line: its position, or for a moved read's invoke the anchor's position + a fraction. */
  const order: number[] = ops.map((_, i) => i);
  /** Per process and key: the position of the last update's invoke. */
  const lastUpdate = new Map<string, number>();
  /** Per process: the moved read whose completion is still to come. */
  const openRead = new Map<Op['process'], number>();
  const processOf = new Map<number, number>();
  let nextProcess = -1;
  let moved = 0;
  /** Per process: its open update (slot and invoke position), which anchors reads once it is ok. */
  const openUpdate = new Map<Op['process'], { slot: string; position: number }>();
  ops.forEach((op, i) => {
    if (op.process === 'nemesis') return;
    if (op.type === 'invoke') {
      const slot = `${String(op.process)}\u0000${keyId(keyOf(op))}`;
      if (op.f === 'read' && op.final !== true) {
        const anchor = lastUpdate.get(slot) ?? -1;
        // Reads moved to one anchor keep their own order: each a little later than the last.
        order[i] = anchor + 0.5 + ++moved / (2 * (ops.length + 1));
        processOf.set(i, nextProcess--);
        openRead.set(op.process, i);
      } else {
        openUpdate.set(op.process, { slot, position: i });
      }
      return;
    }
    const read = openRead.get(op.process);
    if (read !== undefined) {
      processOf.set(i, processOf.get(read)!);
      openRead.delete(op.process);
    }
    const update = openUpdate.get(op.process);
    if (update !== undefined) {
      // Only an update that took effect bounds its process's later reads (a failed one did not
      // happen; after an unknown outcome the process does not go on).
      if (op.type === 'ok') lastUpdate.set(update.slot, update.position);
      openUpdate.delete(op.process);
    }
  });
  const positions = ops.map((_, i) => i).sort((a, b) => order[a] - order[b]);
  return {
    ops: positions.map((i) => {
      const process = processOf.get(i);
      return process === undefined ? ops[i] : { ...ops[i], process };
    }),
    origin: positions.map((i) => ops[i]),
  };
}
