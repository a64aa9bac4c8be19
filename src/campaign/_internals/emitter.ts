import type { Reporter } from '../reporter.js';

/** Calls one hook on every reporter that has it, in the order the reporters were given. */
export type Emit = <K extends keyof Reporter>(hook: K, ...args: Parameters<NonNullable<Reporter[K]>>) => void;

/** The run's events fanned out to its reporters. */
export function emitter(reporters: readonly Reporter[]): Emit {
  return (hook, ...args) => {
    for (const reporter of reporters) {
      const fn = reporter[hook] as ((...a: typeof args) => void) | undefined;
      fn?.apply(reporter, args);
    }
  };
}
