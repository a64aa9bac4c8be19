import type { Model, ModelName } from '../model.js';
import { casRegisterModel, registerModel, registerStartingAt } from './cas-register.js';
import { counterModel } from './counter.js';
import { kvModel, kvStartingAt } from './kv.js';
import { setModel } from './set.js';
import { stringKvModel } from './string-kv.js';

const MODELS: Readonly<Record<ModelName, unknown>> = {
  register: registerModel,
  'cas-register': casRegisterModel,
  kv: kvModel,
  'string-kv': stringKvModel,
  set: setModel,
  counter: counterModel,
};

/** The models that hold one value per register, which can start at a value other than nil. */
export const REGISTER_MODEL_NAMES = [
  'register',
  'cas-register',
  'kv',
] as const satisfies readonly ModelName[];
export type RegisterModelName = (typeof REGISTER_MODEL_NAMES)[number];

export function isRegisterModelName(name: string): name is RegisterModelName {
  return (REGISTER_MODEL_NAMES as readonly string[]).includes(name);
}

/** The built-in model of that name; a register model holds `initial` before any write (default nil). */
export function modelByName(name: ModelName, initial?: unknown): Model {
  if (initial === undefined || !isRegisterModelName(name)) return MODELS[name] as Model;
  return name === 'kv' ? kvStartingAt(initial) : registerStartingAt(name === 'cas-register', initial);
}
