const INITIAL_CAPACITY = 1024;

/** An append-only list of 32-bit integers in one typed array: no boxed number per entry. */
export class IntList {
  private data: Int32Array;
  length = 0;

  constructor(capacity = INITIAL_CAPACITY) {
    this.data = new Int32Array(Math.max(1, capacity));
  }

  push(value: number): void {
    if (this.length === this.data.length) {
      const grown = new Int32Array(this.data.length * 2);
      grown.set(this.data);
      this.data = grown;
    }
    this.data[this.length++] = value;
  }

  set(i: number, value: number): void {
    this.data[i] = value;
  }

  get(i: number): number {
    return this.data[i];
  }

  /** The entries, as a view of the storage (no copy): the list must not grow afterwards. */
  view(): Int32Array {
    return this.data.subarray(0, this.length);
  }
}
