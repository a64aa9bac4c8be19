/** A growable Int32Array: one int per element, no boxing. */
export class IntVec {
  data: Int32Array;
  length = 0;

  /** An empty vector with room for `capacity` ints, or for as many as `room` holds (in `room`). */
  constructor(room: number | Int32Array = 16) {
    this.data = typeof room === 'number' ? new Int32Array(room) : room;
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
