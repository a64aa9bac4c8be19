/**
 * Delta debugging (Zeller and Hildebrandt, "Simplifying and Isolating Failure-Inducing Input",
 * TSE 2002): the smallest subsequence of `items` it can find for which `test` still holds, trying
 * chunks, then their complements, at ever finer granularity. The result is 1-minimal when `test`
 * is deterministic: dropping any single item of it makes `test` fail. `test(items)` itself is
 * assumed to hold and is not asked. Each subset is asked at most once; `stop` ends the search early
 * (the smallest subset found so far comes back).
 */
export async function ddmin<T>(
  items: readonly T[],
  test: (subset: readonly T[]) => Promise<boolean>,
  stop: () => boolean = () => false,
): Promise<T[]> {
  const asked = new Map<string, boolean>();
  const holds = async (indices: readonly number[]): Promise<boolean> => {
    const key = indices.join(',');
    let result = asked.get(key);
    if (result === undefined) {
      result = await test(indices.map((i) => items[i]));
      asked.set(key, result);
    }
    return result;
  };
  let current = items.map((_, i) => i);
  let granularity = 2;
  while (current.length >= 2 && !stop()) {
    const chunks = split(current, granularity);
    let reduced = false;
    for (const chunk of chunks) {
      if (stop()) break;
      if (await holds(chunk)) {
        current = chunk;
        granularity = 2;
        reduced = true;
        break;
      }
    }
    if (!reduced && granularity > 2) {
      for (const chunk of chunks) {
        if (stop()) break;
        const complement = current.filter((i) => !chunk.includes(i));
        if (await holds(complement)) {
          current = complement;
          granularity = Math.max(granularity - 1, 2);
          reduced = true;
          break;
        }
      }
    }
    if (reduced) continue;
    if (granularity >= current.length) break;
    granularity = Math.min(granularity * 2, current.length);
  }
  return current.map((i) => items[i]);
}

/** `n` chunks of nearly equal size, in order. */
function split(indices: readonly number[], n: number): number[][] {
  const chunks: number[][] = [];
  let start = 0;
  for (let k = 0; k < n; k++) {
    const end = start + Math.floor((indices.length - start) / (n - k));
    chunks.push(indices.slice(start, end));
    start = end;
  }
  return chunks.filter((c) => c.length > 0);
}
