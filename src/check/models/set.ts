import { ednText } from '../_internals/edn-text.js';
import { exactJson } from '../../core/exact-json.js';
import { EdnSet } from '../history/edn-types.js';
import { hashString } from '../_internals/hash.js';
import type { Model } from '../model.js';

/**
 * The state is the set's elements as sorted canonical EDN texts (one per value under EDN's
 * equality, see ednText; integers beyond 2^53 exact) joined by a separator no such text contains.
 */
type SetState = string;

const SEPARATOR = '\u0001';

export type SetInput = { readonly f: 'add'; readonly element: string } | { readonly f: 'read' };

const READ: SetInput = { f: 'read' };

function elementsOf(state: SetState): string[] {
  return state === '' ? [] : state.split(SEPARATOR);
}

function elementText(value: unknown): string {
  return ednText(value, true);
}

function stateOf(value: unknown): SetState {
  const items: unknown = value instanceof EdnSet ? value.items : value;
  if (!Array.isArray(items)) {
    throw new Error(`a set read must return a list of elements, got ${exactJson(value)}`);
  }
  const unique = [...new Set(items.map(elementText))];
  return unique.sort().join(SEPARATOR);
}

/** A grow-only set starting empty: `add` an element, `read` returns all elements (any order). */
export const setModel: Model<SetState, SetInput, SetState> = {
  name: 'set',
  input(f, value) {
    if (f === 'read') return READ;
    if (f === 'add') return { f: 'add', element: elementText(value) };
    throw new Error(`model set knows add, read; got f=${f}`);
  },
  output: (f, value) => (f === 'read' ? stateOf(value) : ''),
  init: () => '',
  step(state, input, output) {
    if (input.f === 'read') return output === undefined || output === state ? state : undefined;
    const elements = elementsOf(state);
    if (elements.includes(input.element)) return state;
    elements.push(input.element);
    return elements.sort().join(SEPARATOR);
  },
  hash: hashString,
  equal: (a, b) => a === b,
  describe: (state) => `#{${elementsOf(state).join(' ')}}`,
};
