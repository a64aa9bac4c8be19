import type { Model } from '../model.js';
import { exactJson } from '../../core/exact-json.js';
import {
  type RegisterInput,
  casRegisterModel,
  registerOnlyStateFor,
  registerStatesEntered,
  stepRegister,
} from './cas-register.js';
import { type Canonical, canonical, canonicalKey, describeCanonical, hashCanonical } from './value.js';

function splitKv(value: unknown): readonly [key: string | number | bigint, v: unknown] {
  if (!Array.isArray(value) || value.length !== 2) {
    throw new Error(`a kv value must be [key, value], got ${exactJson(value)}`);
  }
  return [canonicalKey(value[0]), value[1]];
}

function makeKv(initial: Canonical): Model<Canonical, RegisterInput, Canonical> {
  return {
    name: 'kv',
    partitionKey: (_f, value) => splitKv(value)[0],
    input: (f, value) => casRegisterModel.input(f, splitKv(value)[1]),
    output: (f, value) => casRegisterModel.output(f, splitKv(value)[1]),
    init: () => initial,
    step: stepRegister,
    onlyStateFor: registerOnlyStateFor,
    statesEntered: registerStatesEntered,
    hash: hashCanonical,
    equal: (a, b) => a === b,
    describe: describeCanonical,
  };
}

/**
 * Independent cas-registers, one per key (`value: [key, v]`, cas `[key, [old, new]]`): checked
 * key by key, each register starting as nil.
 */
export const kvModel: Model<Canonical, RegisterInput, Canonical> = makeKv(null);

/** Like `kvModel`, every key holding `initial` before any write. */
export function kvStartingAt(initial: unknown): Model<Canonical, RegisterInput, Canonical> {
  return makeKv(canonical(initial));
}
