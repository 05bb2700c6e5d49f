import type { JsonSchema } from '../json-validator';
import type { FieldSpec } from './types';

/** JSON Schema (draft 2020-12 subset) of one typed field; core/json-validator.ts checks values against it. */
export function fieldToJsonSchema(field: Omit<FieldSpec, 'name' | 'required'>): JsonSchema {
  const schema: JsonSchema = { type: field.type, description: field.description };
  if (field.type === 'array' && field.items) {
    schema.items = field.enum ? { type: field.items, enum: field.enum } : { type: field.items };
  } else if (field.enum) {
    schema.enum = field.enum;
  }
  if (field.minimum !== undefined) schema.minimum = field.minimum;
  if (field.maximum !== undefined) schema.maximum = field.maximum;
  if (field.default !== undefined) schema.default = field.default;
  return schema;
}

/** JSON Schema of an object with the given fields, for tools, checkpoint params and output checks. */
export function fieldsToJsonSchema(fields: FieldSpec[]): JsonSchema {
  const properties: Record<string, JsonSchema> = {};
  for (const field of fields) properties[field.name] = fieldToJsonSchema(field);
  const required = fields.filter((f) => f.required).map((f) => f.name);
  return { type: 'object', properties, ...(required.length > 0 ? { required } : {}), additionalProperties: false };
}
