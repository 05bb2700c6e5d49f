import type { JsonSchema } from '../../../core/json-validator';

/**
 * A form generated from a JSON Schema (a checkpoint's paramsSchema, a skill's parameters) holds each field as the
 * person edits it: text for numbers and free text, a flag for booleans, the chosen values for an array of an enum.
 * `valuesOf` turns the drafts back into JSON values; what does not parse is sent as typed, so the API's 400 names it.
 */
export type Draft = string | boolean | string[];
export type Drafts = Record<string, Draft>;

export type FieldKind = 'enum' | 'number' | 'boolean' | 'choices' | 'list' | 'text' | 'json';

export function fieldKind(schema: JsonSchema): FieldKind {
  if (schema.enum && schema.enum.length > 0) return 'enum';
  switch (schema.type) {
    case 'integer':
    case 'number':
      return 'number';
    case 'boolean':
      return 'boolean';
    case 'array':
      if (schema.items?.enum && schema.items.enum.length > 0) return 'choices';
      return schema.items?.type === 'object' || schema.items?.type === 'array' ? 'json' : 'list';
    case 'string':
      return 'text';
    default:
      return 'json';
  }
}

export const propertiesOf = (schema: JsonSchema | null | undefined): Array<[string, JsonSchema]> =>
  Object.entries(schema?.properties ?? {});

/** The draft of one field from its value, else the schema's default, else empty. */
export function draftOf(schema: JsonSchema, value: unknown): Draft {
  const given = value === undefined ? schema.default : value;
  switch (fieldKind(schema)) {
    case 'boolean':
      return given === true;
    case 'choices':
      return Array.isArray(given) ? given.map(String) : [];
    case 'list':
      return Array.isArray(given) ? given.map(String).join(', ') : '';
    case 'json':
      return given === undefined ? '' : JSON.stringify(given, null, 2);
    default:
      return given === undefined || given === null ? '' : String(given);
  }
}

export function draftsOf(schema: JsonSchema | null | undefined, values: Record<string, unknown> | null): Drafts {
  return Object.fromEntries(propertiesOf(schema).map(([name, field]) => [name, draftOf(field, values?.[name])]));
}

/** The JSON value of a draft; undefined for an empty optional field. */
export function valueOf(schema: JsonSchema, draft: Draft): unknown {
  switch (fieldKind(schema)) {
    case 'boolean':
      return draft === true;
    case 'choices':
      return Array.isArray(draft) ? draft.map((item) => enumValue(schema.items!, item)) : [];
    case 'enum':
      return draft === '' ? undefined : enumValue(schema, draft as string);
    case 'number': {
      const text = (draft as string).trim();
      if (text === '') return undefined;
      const number = Number(text);
      return Number.isFinite(number) ? number : text;
    }
    case 'list': {
      const items = (draft as string)
        .split(',')
        .map((item) => item.trim())
        .filter((item) => item !== '');
      return schema.items?.type === 'number' || schema.items?.type === 'integer'
        ? items.map((item) => (Number.isFinite(Number(item)) ? Number(item) : item))
        : items;
    }
    case 'json': {
      const text = (draft as string).trim();
      if (text === '') return undefined;
      try {
        return JSON.parse(text) as unknown;
      } catch {
        return text;
      }
    }
    default:
      return draft === '' ? undefined : draft;
  }
}

/** An enum's values may be numbers: the option's text maps back to the value it shows. */
function enumValue(schema: JsonSchema, text: string): unknown {
  return schema.enum?.find((value) => String(value) === text) ?? text;
}

export function valuesOf(schema: JsonSchema | null | undefined, drafts: Drafts): Record<string, unknown> {
  const values: Record<string, unknown> = {};
  for (const [name, field] of propertiesOf(schema)) {
    const value = valueOf(field, drafts[name] ?? draftOf(field, undefined));
    if (value !== undefined) values[name] = value;
  }
  return values;
}

/** The values that differ from the proposed ones (an empty list where none was proposed does not): a modify's overrides. */
export function changedValues(
  schema: JsonSchema | null | undefined,
  drafts: Drafts,
  proposed: Record<string, unknown> | null,
): Record<string, unknown> {
  const values = valuesOf(schema, drafts);
  const unchanged = (name: string, value: unknown) =>
    JSON.stringify(value) === JSON.stringify(proposed?.[name]) ||
    (proposed?.[name] === undefined && Array.isArray(value) && value.length === 0);
  return Object.fromEntries(Object.entries(values).filter(([name, value]) => !unchanged(name, value)));
}

/** `overrides.question_count` or `params.question_count[0]` -> `question_count`; others (`note`, `answer`) as they are. */
export function fieldOfPath(path: string): string {
  const rest = path.replace(/^(overrides|params)\./, '');
  return rest.split(/[.[]/)[0];
}
