// A small JSON Schema checker for the subset the OpenAPI document uses ($ref, type, properties,
// required, additionalProperties, items, enum, const, oneOf, minimum, maximum, minLength,
// minItems, maxItems), so
// the contract is checked against real responses without another dependency.

type Schema = Record<string, any>;

function typeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

/** Every violation of `schema` by `value` (empty when valid); `root` resolves `#/...` refs. */
export function checkSchema(value: unknown, schema: Schema, root: Schema, path = ''): string[] {
  if (schema['$ref'] !== undefined) {
    const target = (schema['$ref'] as string)
      .slice(2)
      .split('/')
      .reduce((node: any, key) => node?.[key], root);
    if (target === undefined) return [`${path}: unresolved ${schema['$ref']}`];
    return checkSchema(value, target, root, path);
  }
  const errors: string[] = [];
  if (schema['oneOf'] !== undefined) {
    const passing = (schema['oneOf'] as Schema[]).filter((option) => checkSchema(value, option, root, path).length === 0);
    if (passing.length !== 1) errors.push(`${path}: matches ${passing.length} of oneOf, expected exactly 1`);
  }
  if (schema['const'] !== undefined && value !== schema['const']) errors.push(`${path}: expected ${JSON.stringify(schema['const'])}`);
  if (schema['enum'] !== undefined && !(schema['enum'] as unknown[]).includes(value)) errors.push(`${path}: ${JSON.stringify(value)} not in enum`);
  if (schema['type'] !== undefined) {
    const types = ([] as string[]).concat(schema['type']);
    const actual = typeOf(value);
    if (!types.includes(actual) && !(actual === 'integer' && types.includes('number'))) errors.push(`${path}: expected ${types.join('|')}, got ${actual}`);
  }
  if (typeof value === 'number') {
    if (schema['minimum'] !== undefined && value < schema['minimum']) errors.push(`${path}: below minimum`);
    if (schema['maximum'] !== undefined && value > schema['maximum']) errors.push(`${path}: above maximum`);
  }
  if (typeof value === 'string' && schema['minLength'] !== undefined && value.length < schema['minLength']) errors.push(`${path}: shorter than minLength`);
  if (Array.isArray(value)) {
    if (schema['minItems'] !== undefined && value.length < schema['minItems']) errors.push(`${path}: fewer items than minItems`);
    if (schema['maxItems'] !== undefined && value.length > schema['maxItems']) errors.push(`${path}: more items than maxItems`);
  }
  if (Array.isArray(value) && schema['items'] !== undefined) {
    value.forEach((item, i) => errors.push(...checkSchema(item, schema['items'], root, `${path}/${i}`)));
  }
  if (typeOf(value) === 'object') {
    const object = value as Record<string, unknown>;
    for (const key of (schema['required'] as string[] | undefined) ?? []) if (!(key in object)) errors.push(`${path}: missing required ${key}`);
    const properties = (schema['properties'] as Record<string, Schema> | undefined) ?? {};
    for (const [key, item] of Object.entries(object)) {
      if (properties[key] !== undefined) errors.push(...checkSchema(item, properties[key]!, root, `${path}/${key}`));
      else if (schema['additionalProperties'] === false) errors.push(`${path}: unexpected property ${key}`);
      else if (typeof schema['additionalProperties'] === 'object') errors.push(...checkSchema(item, schema['additionalProperties'], root, `${path}/${key}`));
    }
  }
  return errors;
}
