// A small JSON Schema checker for the subset the OpenAPI document uses ($ref, type, properties,
// required, additionalProperties, items, enum, const, oneOf, minimum, maximum, minLength,
// minItems, maxItems), so the contract is checked against real responses without another
// dependency; and checkResponse, which checks a whole response (status, media type, body,
// headers) against the operation that documents it.

type Schema = Record<string, any>;

function typeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

/** The target of a local `$ref` ("#/components/..."), or undefined when it names nothing. */
function resolve(ref: string, root: Schema): Schema | undefined {
  return ref
    .slice(2)
    .split('/')
    .reduce((node: any, key) => node?.[key], root);
}

/** How to check: `closed` takes an object schema that does not say what else it holds as holding nothing else. */
export interface CheckOptions {
  /**
   * Report members the document does not describe: an object schema without
   * `additionalProperties` is taken as `additionalProperties: false` (a free-form object must
   * say `additionalProperties: true`).
   */
  readonly closed?: boolean;
  /** Where `value` is in the checked document (a JSON pointer), for the messages. */
  readonly path?: string;
}

/** Every violation of `schema` by `value` (empty when valid); `root` resolves `#/...` refs. */
export function checkSchema(value: unknown, schema: Schema, root: Schema, options: CheckOptions = {}): string[] {
  const path = options.path ?? '';
  const at = (next: string) => ({ ...options, path: next });
  if (schema['$ref'] !== undefined) {
    const target = resolve(schema['$ref'] as string, root);
    if (target === undefined) return [`${path}: unresolved ${schema['$ref']}`];
    return checkSchema(value, target, root, options);
  }
  const errors: string[] = [];
  if (schema['oneOf'] !== undefined) {
    const passing = (schema['oneOf'] as Schema[]).filter((option) => checkSchema(value, option, root, options).length === 0);
    if (passing.length !== 1) errors.push(`${path}: matches ${passing.length} of oneOf, expected exactly 1`);
  }
  if (schema['const'] !== undefined && value !== schema['const']) errors.push(`${path}: expected ${JSON.stringify(schema['const'])}`);
  if (schema['enum'] !== undefined && !(schema['enum'] as unknown[]).includes(value)) errors.push(`${path}: ${JSON.stringify(value)} not in enum`);
  const types = schema['type'] === undefined ? undefined : ([] as string[]).concat(schema['type']);
  if (types !== undefined) {
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
    value.forEach((item, i) => errors.push(...checkSchema(item, schema['items'], root, at(`${path}/${i}`))));
  }
  if (typeOf(value) === 'object') {
    const object = value as Record<string, unknown>;
    for (const key of (schema['required'] as string[] | undefined) ?? []) if (!(key in object)) errors.push(`${path}: missing required ${key}`);
    const properties = (schema['properties'] as Record<string, Schema> | undefined) ?? {};
    const objectSchema = schema['properties'] !== undefined || types?.includes('object') === true;
    const additional = schema['additionalProperties'] ?? (options.closed === true && objectSchema ? false : undefined);
    for (const [key, item] of Object.entries(object)) {
      if (properties[key] !== undefined) errors.push(...checkSchema(item, properties[key]!, root, at(`${path}/${key}`)));
      else if (additional === false) errors.push(`${path}: unexpected property ${key}`);
      else if (typeof additional === 'object') errors.push(...checkSchema(item, additional, root, at(`${path}/${key}`)));
    }
  }
  return errors;
}

/** A response as the tests hold it: status, headers (fetch's or a plain object) and the body, parsed when JSON. */
export interface CheckedResponse {
  readonly status: number;
  readonly headers: Headers | Readonly<Record<string, string | undefined>>;
  readonly json: unknown;
}

// Response headers that are part of the contract: a response that sends one must declare it.
const CONTRACT_HEADERS = ['www-authenticate', 'allow', 'retry-after', 'accept-post', 'accept-encoding', 'x-next-cursor', 'content-disposition', 'etag', 'idempotent-replayed'];

/**
 * Every way a response departs from the document: its status not documented for the operation,
 * its media type not documented for the status, its body not valid for that schema or holding a
 * member the schema does not describe, a contract header sent but not declared, or a header
 * declared required missing. Empty when the document describes it.
 */
export function checkResponse(document: Schema, path: string, method: string, response: CheckedResponse): string[] {
  const where = `${method.toUpperCase()} ${path} ${response.status}`;
  const documented = document['paths']?.[path]?.[method]?.responses?.[String(response.status)];
  if (documented === undefined) return [`${where}: not documented`];
  const headers = new Map<string, string>();
  if (response.headers instanceof Headers) response.headers.forEach((value, name) => headers.set(name, value));
  else for (const [name, value] of Object.entries(response.headers)) if (value !== undefined) headers.set(name.toLowerCase(), value);
  const errors: string[] = [];
  const mediaType = headers.get('content-type')?.split(';')[0]!.trim();
  if (mediaType !== undefined) {
    const schema = documented.content?.[mediaType]?.schema;
    if (schema === undefined) errors.push(`${where}: ${mediaType} not documented`);
    else errors.push(...checkSchema(response.json, schema, document, { closed: true }).map((error) => `${where}: ${error}`));
  }
  const declared = Object.entries((documented.headers ?? {}) as Record<string, Schema>);
  for (const name of CONTRACT_HEADERS) {
    if (headers.has(name) && !declared.some(([header]) => header.toLowerCase() === name)) errors.push(`${where}: sends ${name}, not declared`);
  }
  for (const [name, header] of declared) {
    const required = (header['$ref'] === undefined ? header : resolve(header['$ref'], document))?.['required'] === true;
    if (required && !headers.has(name.toLowerCase())) errors.push(`${where}: declares ${name} required, not sent`);
  }
  return errors;
}
