import type { FieldSpec } from './types';

/** JSON Schema (draft 2020-12 subset) of an object with the given fields, for tools and for output checks. */
export function fieldsToJsonSchema(fields: FieldSpec[]): Record<string, unknown> {
  const properties: Record<string, unknown> = {};
  for (const field of fields) {
    const schema: Record<string, unknown> = { type: field.type, description: field.description };
    if (field.type === 'array' && field.items) {
      schema.items = field.enum ? { type: field.items, enum: field.enum } : { type: field.items };
    } else if (field.enum) {
      schema.enum = field.enum;
    }
    if (field.minimum !== undefined) schema.minimum = field.minimum;
    if (field.maximum !== undefined) schema.maximum = field.maximum;
    if (field.default !== undefined) schema.default = field.default;
    properties[field.name] = schema;
  }
  const required = fields.filter((f) => f.required).map((f) => f.name);
  return { type: 'object', properties, ...(required.length > 0 ? { required } : {}), additionalProperties: false };
}
