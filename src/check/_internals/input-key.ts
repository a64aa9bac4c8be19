/**
 * A text equal for equal inputs: defined only for primitives and plain objects and arrays of them,
 * where JSON is faithful; undefined otherwise (a Map, a class instance), so such inputs are never
 * taken as equal.
 */
export function inputKey(input: unknown): string | undefined {
  return isPlain(input) ? JSON.stringify(input) : undefined;
}

function isPlain(value: unknown): boolean {
  if (value === null) return true;
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return true;
    case 'number':
      return Number.isFinite(value);
    case 'object': {
      if (Array.isArray(value)) return value.every(isPlain);
      const proto: unknown = Object.getPrototypeOf(value);
      return (proto === Object.prototype || proto === null) && Object.values(value).every(isPlain);
    }
    default:
      return false;
  }
}
