import type { Op } from '../../../src/core/op.js';

/**
 * Whether some order of a history's committed transactions, run one at a time on empty lists,
 * gives every read it saw: serializability by trying all orders (a handful of transactions only).
 * Only `ok` transactions count; failed ones are ignored, and there must be no `info`.
 */
export function bruteForceSerializable(ops: readonly Op[]): boolean {
  const txns = ops.filter((op) => op.type === 'ok').map((op) => op.value as readonly (readonly unknown[])[]);
  const same = (a: readonly unknown[], b: readonly unknown[] | null): boolean =>
    (b ?? []).length === a.length && a.every((x, i) => x === (b ?? [])[i]);
  const runs = (order: readonly number[]): boolean => {
    const lists = new Map<unknown, unknown[]>();
    for (const t of order)
      for (const [f, k, v] of txns[t]) {
        const list = lists.get(k) ?? [];
        lists.set(k, list);
        if (f === 'append') list.push(v);
        else if (!same(list, v as readonly unknown[] | null)) return false;
      }
    return true;
  };
  const permute = (prefix: number[], rest: number[]): boolean =>
    rest.length === 0
      ? runs(prefix)
      : rest.some((t, i) => permute([...prefix, t], [...rest.slice(0, i), ...rest.slice(i + 1)]));
  return permute(
    [],
    txns.map((_, i) => i),
  );
}
