import { type Clock, realClock } from '../../core/clock.js';

/** A safety net over a client's own timeout: an op never hangs a worker. */
export function withTimeout<T>(promise: Promise<T>, ms: number, clock: Clock = realClock): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const cancel = clock.timer(ms, () => {
      reject(new Error(`no answer in ${ms} ms`));
    });
    promise.then(
      (v) => {
        cancel();
        resolve(v);
      },
      (e: unknown) => {
        cancel();
        reject(e instanceof Error ? e : new Error(String(e)));
      },
    );
  });
}
