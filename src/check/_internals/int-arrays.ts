/**
 * Zeroed `Int32Array`s of the given lengths, views of one buffer: one allocation instead of one
 * per array (allocating a typed array's memory cost a search of a small history about as much as
 * its work with it).
 */
export function intArrays(lengths: readonly number[]): Int32Array<ArrayBuffer>[] {
  let total = 0;
  for (const length of lengths) total += length;
  const block = new Int32Array(total);
  const arrays: Int32Array<ArrayBuffer>[] = [];
  let at = 0;
  for (const length of lengths) {
    arrays.push(block.subarray(at, at + length));
    at += length;
  }
  return arrays;
}
