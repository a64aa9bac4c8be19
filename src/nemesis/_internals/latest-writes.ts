interface Waiting<T> {
  value: T;
  readonly done: Promise<void>;
  readonly resolve: () => void;
  readonly reject: (error: unknown) => void;
}

interface Lane<T> {
  flight: Promise<void> | undefined;
  next: Waiting<T> | undefined;
}

/** How many writes were asked for and how many were made (the rest were overtaken by newer ones). */
export interface WriteCounts {
  readonly asked: number;
  readonly written: number;
}

/**
 * Writes values per key through `put`, in order and at most one at a time per key: a value asked
 * while a write of its key is in flight waits, and a newer one takes its place, so only the newest
 * is written next and slow writes (a command over SSH) never pile up behind a fast ticker.
 */
export class LatestWrites<T> {
  private readonly lanes = new Map<string, Lane<T>>();
  private failure: { readonly error: unknown } | undefined;
  private asked = 0;
  private written = 0;

  constructor(private readonly put: (key: string, value: T) => Promise<void>) {}

  /**
   * Resolves once `value` or a newer value of `key` is written; rejects when that write failed (the
   * failure is also kept for `settled`).
   */
  write(key: string, value: T): Promise<void> {
    this.asked++;
    let lane = this.lanes.get(key);
    if (!lane) {
      lane = { flight: undefined, next: undefined };
      this.lanes.set(key, lane);
    }
    if (lane.flight === undefined) return this.launch(key, lane, value);
    if (lane.next) {
      lane.next.value = value;
      return lane.next.done;
    }
    let resolve!: () => void;
    let reject!: (error: unknown) => void;
    const done = new Promise<void>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    // A caller that drops the promise has the failure from `settled`.
    done.catch(() => undefined);
    lane.next = { value, done, resolve, reject };
    return done;
  }

  /**
   * Resolves once every write asked so far has landed (or been overtaken by one that has: a key
   * rewritten by a ticker meanwhile is not waited for past that); rejects with the first failure
   * since the last call.
   */
  async settled(): Promise<void> {
    const newest = [...this.lanes.values()].flatMap((l) =>
      l.next ? [l.next.done] : l.flight ? [l.flight] : [],
    );
    await Promise.allSettled(newest);
    const failure = this.failure;
    this.failure = undefined;
    if (failure) throw failure.error;
  }

  get counts(): WriteCounts {
    return { asked: this.asked, written: this.written };
  }

  private launch(key: string, lane: Lane<T>, value: T): Promise<void> {
    this.written++;
    const flight = this.put(key, value).finally(() => {
      lane.flight = undefined;
      const next = lane.next;
      lane.next = undefined;
      if (next) this.launch(key, lane, next.value).then(next.resolve, next.reject);
    });
    lane.flight = flight;
    flight.catch((error: unknown) => {
      this.failure ??= { error };
    });
    return flight;
  }
}
