/** A growable Int32Array: one int per element, no boxing. */
export class IntVec {
  data: Int32Array;
  length = 0;

  constructor(capacity = 16) {
    this.data = new Int32Array(capacity);
  }

  push(value: number): void {
    if (this.length === this.data.length) {
      const bigger = new Int32Array(this.data.length * 2);
      bigger.set(this.data);
      this.data = bigger;
    }
    this.data[this.length++] = value;
  }

  get(i: number): number {
    return this.data[i];
  }

  set(i: number, value: number): void {
    this.data[i] = value;
  }
}
