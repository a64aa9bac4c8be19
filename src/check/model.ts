/**
 * A sequential specification a history is checked against. A system adapter can implement its own;
 * the built-in ones are `register`, `cas-register`, `kv`, `string-kv`, `set` and `counter`.
 *
 * `S` is the model state, `I` the input taken from an invoke, `O` the output taken from an `ok`
 * completion. An `info` completion (outcome unknown) steps with `output` undefined: the op may have
 * taken effect, so `step` returns the state it would leave, or undefined if it cannot take effect.
 */
export interface Model<S = unknown, I = unknown, O = unknown> {
  readonly name: string;
  /**
   * P-compositionality: ops with different keys are checked as independent histories. Absent: the
   * whole history is one partition. The key must be a string, a number or a bigint (an integer
   * beyond 2^53, kept exact).
   */
  readonly partitionKey?: (f: string, value: unknown) => string | number | bigint;
  /** Reads the input of an op from its invoke; throws with a message saying what is wrong. */
  input(f: string, value: unknown): I;
  /** Reads the output of an op from its `ok` completion. */
  output(f: string, value: unknown): O;
  init(): S;
  /** The state after the op, or undefined when the op cannot happen in `state` with this output. */
  step(state: S, input: I, output: O | undefined): S | undefined;
  /**
   * Optional, lets the search prune (give it with `statesEntered`): the one state in which an op
   * with this output can take effect — a register read of v needs v, a cas from a needs a — or
   * undefined when it can take effect in any state, and then it must either keep the state or
   * leave one that does not depend on it (a write; a read whose outcome is unknown). `output` is
   * undefined for an op whose outcome is unknown (info).
   */
  onlyStateFor?(input: I, output: O | undefined): S | undefined;
  /**
   * Optional, with `onlyStateFor`: every state the op can move the model into from a different
   * state, whatever its output (a register write of v: [v]; a cas to b: [b]; a read: none). Once
   * no op left can enter a state the model has left, the ops that need that state cannot happen.
   */
  statesEntered?(input: I): readonly S[];
  hash(state: S): number;
  equal(a: S, b: S): boolean;
  describe(state: S): string;
}

export const MODEL_NAMES = ['register', 'cas-register', 'kv', 'string-kv', 'set', 'counter'] as const;
export type ModelName = (typeof MODEL_NAMES)[number];

export function isModelName(name: string): name is ModelName {
  return (MODEL_NAMES as readonly string[]).includes(name);
}
