import type { Model } from '../model.js';
import { exactJson } from '../../core/exact-json.js';
import { type Canonical, canonical, describeCanonical, hashCanonical } from './value.js';

/** What a register op asks for: a read, a write of `value`, or a compare-and-set. */
export type RegisterInput =
  | { readonly f: 'read' }
  | { readonly f: 'write'; readonly value: Canonical }
  | { readonly f: 'cas'; readonly from: Canonical; readonly to: Canonical };

const READ: RegisterInput = { f: 'read' };

function registerInput(modelName: string, f: string, value: unknown, allowCas: boolean): RegisterInput {
  switch (f) {
    case 'read':
      return READ;
    case 'write':
      return { f: 'write', value: canonical(value) };
    case 'cas':
      if (!allowCas) {
        throw new Error(`model ${modelName} has no cas: check with --model cas-register`);
      }
      if (!Array.isArray(value) || value.length !== 2) {
        throw new Error(`a cas value must be [old, new], got ${exactJson(value)}`);
      }
      return { f: 'cas', from: canonical(value[0]), to: canonical(value[1]) };
    default:
      throw new Error(`model ${modelName} knows read, write${allowCas ? ', cas' : ''}; got f=${f}`);
  }
}

/** One register step; the output is the value a read returned (unused for write and cas). */
export function stepRegister(
  state: Canonical,
  input: RegisterInput,
  output: Canonical | undefined,
): Canonical | undefined {
  switch (input.f) {
    case 'read':
      return output === undefined || output === state ? state : undefined;
    case 'write':
      return input.value;
    case 'cas':
      return state === input.from ? input.to : undefined;
  }
}

/** The one state a register op can take effect in: an ok read's value, a cas's old value. */
export function registerOnlyStateFor(
  input: RegisterInput,
  output: Canonical | undefined,
): Canonical | undefined {
  switch (input.f) {
    case 'read':
      return output;
    case 'write':
      return undefined;
    case 'cas':
      return input.from;
  }
}

const NO_STATES: readonly Canonical[] = [];

/** The values a register op can set: a write's, a cas's new one. */
export function registerStatesEntered(input: RegisterInput): readonly Canonical[] {
  switch (input.f) {
    case 'read':
      return NO_STATES;
    case 'write':
      return [input.value];
    case 'cas':
      return [input.to];
  }
}

function makeRegister(
  name: string,
  allowCas: boolean,
  initial: Canonical = null,
): Model<Canonical, RegisterInput, Canonical> {
  return {
    name,
    input: (f, value) => registerInput(name, f, value, allowCas),
    // Only a read's output is stepped on: a write's or a cas's is not read (`[old new]` would cost
    // its EDN text for nothing).
    output: (f, value) => (f === 'read' ? canonical(value) : null),
    init: () => initial,
    step: stepRegister,
    onlyStateFor: registerOnlyStateFor,
    statesEntered: registerStatesEntered,
    hash: hashCanonical,
    equal: (a, b) => a === b,
    describe: describeCanonical,
  };
}

/** A single register with read, write and compare-and-set; it starts as nil (null). */
export const casRegisterModel: Model<Canonical, RegisterInput, Canonical> = makeRegister(
  'cas-register',
  true,
);

/** A single register with read and write only; it starts as nil (null). */
export const registerModel: Model<Canonical, RegisterInput, Canonical> = makeRegister('register', false);

/** A register (`cas`: with compare-and-set) that holds `initial` before any write, as Knossos's start at 0. */
export function registerStartingAt(
  allowCas: boolean,
  initial: unknown,
): Model<Canonical, RegisterInput, Canonical> {
  return makeRegister(allowCas ? 'cas-register' : 'register', allowCas, canonical(initial));
}
