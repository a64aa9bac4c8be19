/**
 * A validator for the draft-07 keywords our generated JSON Schemas use (type, properties, required,
 * additionalProperties, propertyNames, items, anyOf, enum, const, minimum, maximum), so a test can
 * check a document against the committed schema file without a JSON Schema library. A keyword it
 * does not know fails the validation: a schema that grows one must grow this too.
 */
type Schema = Readonly<Record<string, unknown>>;

const ANNOTATIONS = new Set(['$schema', '$id', 'title', 'description', 'default']);

function typeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

function hasType(value: unknown, type: string): boolean {
  const actual = typeOf(value);
  return actual === type || (type === 'number' && actual === 'integer');
}

/** The errors of `value` against `schema`, each naming the JSON path; empty when it is valid. */
export function validateJsonSchema(schema: Schema, value: unknown, path = '$'): string[] {
  const errors: string[] = [];
  for (const [keyword, arg] of Object.entries(schema)) {
    if (ANNOTATIONS.has(keyword)) continue;
    switch (keyword) {
      case 'type': {
        const types = Array.isArray(arg) ? (arg as string[]) : [arg as string];
        if (!types.some((t) => hasType(value, t)))
          errors.push(`${path}: expected ${types.join('|')}, got ${typeOf(value)}`);
        break;
      }
      case 'const':
        if (JSON.stringify(value) !== JSON.stringify(arg))
          errors.push(`${path}: expected ${JSON.stringify(arg)}`);
        break;
      case 'enum':
        if (!(arg as unknown[]).some((a) => JSON.stringify(a) === JSON.stringify(value)))
          errors.push(`${path}: ${JSON.stringify(value)} not in ${JSON.stringify(arg)}`);
        break;
      case 'minimum':
        if (typeof value === 'number' && value < (arg as number))
          errors.push(`${path}: ${value} < ${String(arg)}`);
        break;
      case 'maximum':
        if (typeof value === 'number' && value > (arg as number))
          errors.push(`${path}: ${value} > ${String(arg)}`);
        break;
      case 'anyOf': {
        const branches = (arg as Schema[]).map((s) => validateJsonSchema(s, value, path));
        if (!branches.some((b) => b.length === 0))
          errors.push(`${path}: matches no anyOf branch (${branches.flat().join('; ')})`);
        break;
      }
      case 'required':
        if (typeOf(value) === 'object')
          for (const k of arg as string[])
            if (!(k in (value as object))) errors.push(`${path}: missing ${k}`);
        break;
      case 'properties':
        if (typeOf(value) === 'object')
          for (const [k, s] of Object.entries(arg as Record<string, Schema>)) {
            const v = (value as Record<string, unknown>)[k];
            if (v !== undefined) errors.push(...validateJsonSchema(s, v, `${path}.${k}`));
          }
        break;
      case 'additionalProperties':
        if (typeOf(value) === 'object') {
          const known = new Set(Object.keys((schema.properties as object | undefined) ?? {}));
          for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
            if (known.has(k)) continue;
            if (arg === false) errors.push(`${path}: unexpected property ${k}`);
            else if (typeof arg === 'object' && arg !== null)
              errors.push(...validateJsonSchema(arg as Schema, v, `${path}.${k}`));
          }
        }
        break;
      case 'propertyNames':
        if (typeOf(value) === 'object')
          for (const k of Object.keys(value as object))
            errors.push(...validateJsonSchema(arg as Schema, k, `${path}[key ${k}]`));
        break;
      case 'items':
        if (Array.isArray(value))
          value.forEach((v, i) => errors.push(...validateJsonSchema(arg as Schema, v, `${path}[${i}]`)));
        break;
      default:
        errors.push(`${path}: the test validator does not know the keyword "${keyword}"`);
    }
  }
  return errors;
}
