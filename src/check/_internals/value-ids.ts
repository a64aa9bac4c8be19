/** Opens an array in the token stream; its length follows. */
const ARRAY = Symbol('array');
/** Opens a plain object; its key count follows, then each key and its value. */
const OBJECT = Symbol('object');
/** Opens a pair (see `pairId`). */
const PAIR = Symbol('pair');
/** Stands for a pair's missing second value. */
const ABSENT = Symbol('absent');

/**
 * A node of the trie: one per token sequence seen so far. It remembers the last child it gave:
 * values alike share most tokens (an object's markers and keys), so most steps skip the map.
 */
interface Node {
  children: Map<unknown, Node> | undefined;
  lastToken: unknown;
  lastChild: Node | undefined;
  id: number;
}

const newNode = (): Node => ({ children: undefined, lastToken: undefined, lastChild: undefined, id: -1 });

/**
 * Gives values a small int id, equal for equal values: for primitives (finite numbers, strings,
 * booleans, null, bigints) and plain objects and arrays of them; -1 otherwise (a Map, a class
 * instance, undefined), so such values are never taken as equal. As `JSON.stringify` would compare
 * them (an object's keys in their order), without building a string per value: a value is a
 * sequence of tokens (primitives, and each array's or object's marker and size) walked down a trie
 * of maps, so looking up a write of a number takes a few map lookups.
 */
export class ValueIds {
  private readonly root = newNode();
  private count = 0;

  /** The id of the value, or -1. */
  id(value: unknown): number {
    const node = walk(this.root, value);
    return node === undefined ? -1 : this.idOf(node);
  }

  /**
   * The id of the pair `(a, b)`, or -1 when either has none; pairs have ids of their own, and `b`
   * may be undefined (a pair with no second value, unequal to any with one).
   */
  pairId(a: unknown, b: unknown): number {
    const first = walk(child(this.root, PAIR), a);
    const node = first === undefined ? undefined : b === undefined ? child(first, ABSENT) : walk(first, b);
    return node === undefined ? -1 : this.idOf(node);
  }

  private idOf(node: Node): number {
    if (node.id < 0) node.id = this.count++;
    return node.id;
  }
}

function child(node: Node, token: unknown): Node {
  // Tokens are never NaN (nor undefined: no child is given for it), so === agrees with the map.
  if (node.lastToken === token && node.lastChild !== undefined) return node.lastChild;
  let children = node.children;
  if (children === undefined) {
    children = new Map();
    node.children = children;
  }
  let next = children.get(token);
  if (next === undefined) {
    next = newNode();
    children.set(token, next);
  }
  node.lastToken = token;
  node.lastChild = next;
  return next;
}

function walk(node: Node, value: unknown): Node | undefined {
  switch (typeof value) {
    case 'string':
    case 'boolean':
    case 'bigint':
      return child(node, value);
    case 'number':
      return Number.isFinite(value) ? child(node, value) : undefined;
    case 'object': {
      if (value === null) return child(node, null);
      if (Array.isArray(value)) {
        let at: Node | undefined = child(child(node, ARRAY), value.length);
        for (let i = 0; i < value.length && at !== undefined; i++) at = walk(at, value[i]);
        return at;
      }
      const proto: unknown = Object.getPrototypeOf(value);
      if (proto !== Object.prototype && proto !== null) return undefined;
      const keys = Object.keys(value);
      let at: Node | undefined = child(child(node, OBJECT), keys.length);
      for (let i = 0; i < keys.length && at !== undefined; i++) {
        at = walk(child(at, keys[i]), (value as Record<string, unknown>)[keys[i]]);
      }
      return at;
    }
    default:
      return undefined;
  }
}
