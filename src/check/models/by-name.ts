import type { Model, ModelName } from '../model.js';
import { casRegisterModel, registerModel } from './cas-register.js';
import { counterModel } from './counter.js';
import { kvModel } from './kv.js';
import { setModel } from './set.js';

const MODELS: Readonly<Record<ModelName, unknown>> = {
  register: registerModel,
  'cas-register': casRegisterModel,
  kv: kvModel,
  set: setModel,
  counter: counterModel,
};

/** The built-in model of that name. */
export function modelByName(name: ModelName): Model {
  return MODELS[name] as Model;
}
