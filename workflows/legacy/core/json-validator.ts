/**
 * The one validator for values checked against a declared schema: checkpoint parameters and a human's overrides
 * today, skill parameters and tool inputs next. It reads the JSON Schema subset that skillflow itself produces
 * (core/skills/json-schema.ts) and that tool input schemas use: type (with integer), properties, required,
 * additionalProperties, enum, minimum/maximum, minLength/maxLength (in code points), minItems/maxItems, items and
 * default (`description` and `title` are documentation). Other keywords are ignored: `unsupportedKeywords` names them,
 * so a schema that is meant to be enforced whole can be checked before use.
 */
export type JsonSchemaType = 'string' | 'number' | 'integer' | 'boolean' | 'array' | 'object' | 'null';

export interface JsonSchema {
  type?: JsonSchemaType;
  title?: string;
  description?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean;
  enum?: readonly unknown[];
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  items?: JsonSchema;
  default?: unknown;
}

export type SchemaRule =
  | 'type'
  | 'required'
  | 'additionalProperties'
  | 'enum'
  | 'minimum'
  | 'maximum'
  | 'minLength'
  | 'maxLength'
  | 'minItems'
  | 'maxItems'
  | 'depth';

/** The keywords the validator reads (and the documentation ones it may skip); every other keyword is ignored. */
export const supportedKeywords: ReadonlySet<string> = new Set([
  'type',
  'description',
  'title',
  'properties',
  'required',
  'additionalProperties',
  'enum',
  'minimum',
  'maximum',
  'minLength',
  'maxLength',
  'minItems',
  'maxItems',
  'items',
  'default',
]);

/**
 * The keywords of a schema (and of its nested schemas) that the validator would ignore, as paths
 * (`properties.url.format`); empty when the validator enforces the whole schema.
 */
export function unsupportedKeywords(schema: JsonSchema, path = ''): string[] {
  const at = (key: string) => (path ? `${path}.${key}` : key);
  const found: string[] = [];
  for (const [key, value] of Object.entries(schema)) {
    if (!supportedKeywords.has(key)) found.push(at(key));
    else if (key === 'items') found.push(...unsupportedKeywords(value as JsonSchema, at(key)));
    else if (key === 'properties') {
      for (const [name, property] of Object.entries(value as Record<string, JsonSchema>))
        found.push(...unsupportedKeywords(property, at(`properties.${name}`)));
    }
  }
  return found;
}

/** One thing wrong with a value: where (`overrides.types[1]`), which rule, what the rule allows, and in words. */
export interface SchemaProblem {
  path: string;
  rule: SchemaRule;
  /** The type, the enum values, `{minimum, maximum}`, or the property names allowed; absent for required and depth. */
  allowed?: unknown;
  message: string;
}

export interface ValidateOptions {
  /** Where the value sits, prefixed to every path (e.g. `overrides`); '' for the root. */
  path?: string;
  /** Fill in the declared default of every missing property that has one (the returned value is a copy). */
  applyDefaults?: boolean;
  /** Nesting beyond this depth is a problem, not a stack overflow. */
  maxDepth?: number;
}

export type Validation = { ok: true; value: unknown } | { ok: false; value: unknown; problems: SchemaProblem[] };

export const defaultMaxDepth = 32;

export function validateJson(value: unknown, schema: JsonSchema, options: ValidateOptions = {}): Validation {
  const problems: SchemaProblem[] = [];
  const context = {
    problems,
    applyDefaults: options.applyDefaults === true,
    maxDepth: options.maxDepth ?? defaultMaxDepth,
  };
  const checked = check(value, schema, options.path ?? '', 0, context);
  return problems.length === 0 ? { ok: true, value: checked } : { ok: false, value: checked, problems };
}

interface Context {
  problems: SchemaProblem[];
  applyDefaults: boolean;
  maxDepth: number;
}

function check(value: unknown, schema: JsonSchema, path: string, depth: number, context: Context): unknown {
  const report: Report = (rule, predicate, allowed) =>
    context.problems.push({
      path,
      rule,
      ...(allowed !== undefined ? { allowed } : {}),
      message: `${path || 'the value'} ${predicate}`,
    });
  if (depth > context.maxDepth) {
    report('depth', `is nested more than ${context.maxDepth} levels deep`);
    return value;
  }
  if (schema.type !== undefined && !hasType(value, schema.type)) {
    report('type', `is ${describe(value)}, not ${article(schema.type)}`, schema.type);
    return value;
  }
  if (schema.enum !== undefined && !schema.enum.some((allowed) => sameJson(allowed, value))) {
    report(
      'enum',
      `is ${JSON.stringify(value)}, not one of ${schema.enum.map((allowed) => JSON.stringify(allowed)).join(', ')}`,
      schema.enum,
    );
  }
  if (typeof value === 'number') {
    const bounds = {
      ...(schema.minimum !== undefined ? { minimum: schema.minimum } : {}),
      ...(schema.maximum !== undefined ? { maximum: schema.maximum } : {}),
    };
    if (schema.minimum !== undefined && value < schema.minimum)
      report('minimum', `is ${value}, below the minimum ${schema.minimum}`, bounds);
    if (schema.maximum !== undefined && value > schema.maximum)
      report('maximum', `is ${value}, above the maximum ${schema.maximum}`, bounds);
  }
  if (typeof value === 'string') checkLength(value, schema, report);
  if (Array.isArray(value)) checkCount(value, schema, report);
  if (Array.isArray(value) && schema.items) {
    const items = schema.items;
    return value.map((item, index) => check(item, items, `${path}[${index}]`, depth + 1, context));
  }
  if (isPlainObject(value)) checkPrototypeKey(value, schema, path, context);
  if (isPlainObject(value) && (schema.properties || schema.required || schema.additionalProperties === false)) {
    return checkObject(value, schema, path, depth, context);
  }
  return value;
}

type Report = (rule: SchemaRule, predicate: string, allowed?: unknown) => void;

function checkLength(value: string, schema: JsonSchema, report: Report): void {
  const length = [...value].length;
  if (schema.minLength !== undefined && length < schema.minLength)
    report('minLength', `is ${length} characters long, shorter than ${schema.minLength}`, {
      minLength: schema.minLength,
    });
  if (schema.maxLength !== undefined && length > schema.maxLength)
    report('maxLength', `is ${length} characters long, longer than ${schema.maxLength}`, {
      maxLength: schema.maxLength,
    });
}

function checkCount(value: unknown[], schema: JsonSchema, report: Report): void {
  if (schema.minItems !== undefined && value.length < schema.minItems)
    report('minItems', `has ${value.length} items, fewer than ${schema.minItems}`, { minItems: schema.minItems });
  if (schema.maxItems !== undefined && value.length > schema.maxItems)
    report('maxItems', `has ${value.length} items, more than ${schema.maxItems}`, { maxItems: schema.maxItems });
}

/**
 * Own names only: `constructor`, `toString` and the like are not declared properties because every object inherits
 * them. The result has no prototype, and `__proto__` is refused (and left out), so no value can set what a result
 * inherits.
 */
function checkObject(
  value: Record<string, unknown>,
  schema: JsonSchema,
  path: string,
  depth: number,
  context: Context,
): Record<string, unknown> {
  const properties = schema.properties ?? {};
  const declared = (key: string): JsonSchema | undefined =>
    Object.hasOwn(properties, key) ? properties[key] : undefined;
  const result: Record<string, unknown> = Object.create(null);
  const at = (key: string) => (path ? `${path}.${key}` : key);
  for (const [key, entry] of Object.entries(value)) {
    if (key === prototypeKey) continue;
    const property = declared(key);
    if (property) {
      result[key] = check(entry, property, at(key), depth + 1, context);
    } else {
      result[key] = entry;
      if (schema.additionalProperties === false) {
        const names = Object.keys(properties);
        context.problems.push({
          path: at(key),
          rule: 'additionalProperties',
          allowed: names,
          message: `${at(key)} is not allowed here; ${names.length > 0 ? `the allowed names are ${names.join(', ')}` : 'nothing may be set here'}`,
        });
      }
    }
  }
  for (const key of new Set([...Object.keys(properties), ...(schema.required ?? [])])) {
    if (Object.hasOwn(value, key) && value[key] !== undefined) continue;
    const fallback = declared(key)?.default;
    if (context.applyDefaults && fallback !== undefined) result[key] = JSON.parse(JSON.stringify(fallback));
    else if (schema.required?.includes(key))
      context.problems.push({ path: at(key), rule: 'required', message: `${at(key)} is required` });
  }
  return result;
}

/** The name that sets an object's prototype when assigned: refused as a property name everywhere. */
const prototypeKey = '__proto__';

function checkPrototypeKey(value: Record<string, unknown>, schema: JsonSchema, path: string, context: Context): void {
  if (!Object.hasOwn(value, prototypeKey)) return;
  const at = path ? `${path}.${prototypeKey}` : prototypeKey;
  const names = Object.keys(schema.properties ?? {});
  context.problems.push({
    path: at,
    rule: 'additionalProperties',
    allowed: names,
    message: `${at} is not allowed: ${prototypeKey} is never a property name (it would set what the object inherits)`,
  });
}

function hasType(value: unknown, type: JsonSchemaType): boolean {
  switch (type) {
    case 'string':
      return typeof value === 'string';
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'integer':
      return Number.isInteger(value);
    case 'boolean':
      return typeof value === 'boolean';
    case 'array':
      return Array.isArray(value);
    case 'object':
      return isPlainObject(value);
    case 'null':
      return value === null;
  }
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** "a string", "a list", "a map", "null": what a value is, in the words the problems use. */
function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a map';
  if (typeof value === 'number' && !Number.isInteger(value)) return 'a number with a fraction';
  return `a ${typeof value}`;
}

function article(type: string): string {
  return /^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`;
}

/** A schema of just the keys and JSON types of the given values: what an undeclared set of params allows. */
export function schemaOfValues(values: Record<string, unknown>): JsonSchema {
  const properties: Record<string, JsonSchema> = Object.create(null);
  for (const [key, value] of Object.entries(values)) {
    properties[key] = {
      type:
        value === null
          ? 'null'
          : Array.isArray(value)
            ? 'array'
            : typeof value === 'object'
              ? 'object'
              : (typeof value as JsonSchemaType),
    };
  }
  return { type: 'object', properties, additionalProperties: false };
}
