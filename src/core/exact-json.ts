/**
 * JSON text of a value, as `JSON.stringify(value, null, indent)` writes it, except that integers
 * are written exactly: a bigint as its digits (JSON.stringify throws on one), and a double holding
 * an integer beyond 2^53 as the integer it holds (so it writes as a bigint of the same value does).
 * Values that have no JSON (undefined, functions) write as `null`, as array elements do.
 */
export function exactJson(value: unknown, indent = 0): string {
  return write(value, ' '.repeat(indent), '') ?? 'null';
}

function write(value: unknown, step: string, margin: string): string | undefined {
  switch (typeof value) {
    case 'bigint':
      return value.toString();
    case 'number':
      return Number.isInteger(value) && !Number.isSafeInteger(value)
        ? BigInt(value).toString()
        : JSON.stringify(value);
    case 'string':
    case 'boolean':
      return JSON.stringify(value);
    case 'object':
      return value === null ? 'null' : writeObject(value, step, margin);
    default:
      return undefined;
  }
}

function writeObject(value: object, step: string, margin: string): string | undefined {
  const toJSON: unknown = (value as { toJSON?: unknown }).toJSON;
  if (typeof toJSON === 'function') return write(toJSON.call(value, ''), step, margin);
  const inner = margin + step;
  const open = step === '' ? '' : `\n${inner}`;
  const close = step === '' ? '' : `\n${margin}`;
  if (Array.isArray(value)) {
    if (value.length === 0) return '[]';
    const items = value.map((item: unknown) => write(item, step, inner) ?? 'null');
    return `[${open}${items.join(`,${open}`)}${close}]`;
  }
  const colon = step === '' ? ':' : ': ';
  const entries: string[] = [];
  for (const [key, item] of Object.entries(value)) {
    const text = write(item, step, inner);
    if (text !== undefined) entries.push(`${JSON.stringify(key)}${colon}${text}`);
  }
  return entries.length === 0 ? '{}' : `{${open}${entries.join(`,${open}`)}${close}}`;
}
