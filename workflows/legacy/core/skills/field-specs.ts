import { isSnakeName } from './names';
import { closest, describeValue, isPlainObject } from './problems';
import { validateJson } from '../json-validator';
import { fieldToJsonSchema } from './json-schema';
import { fieldTypes, type FieldSpec, type FieldType, type ItemType, type JsonValue } from './types';

export type Report = (field: string, message: string, fix: string) => void;

export const fieldKeys = ['type', 'description', 'required', 'default', 'enum', 'items', 'minimum', 'maximum'] as const;

/** Reads a map of typed fields (`parameters`, `output`, a checkpoint's `params`) written in skillflow.yaml. */
export function checkFields(value: unknown, path: string, report: Report): FieldSpec[] {
  if (value === undefined) return [];
  if (!isPlainObject(value)) {
    report(
      path,
      `${path} is ${describeValue(value)}, not a map of fields`,
      `write one "NAME:" entry per field, each with type and description (see docs/skills.md).`,
    );
    return [];
  }
  return Object.entries(value).flatMap(([name, spec]) => {
    const field = checkField(name, spec, `${path}.${name}`, report);
    return field ? [field] : [];
  });
}

function checkField(name: string, spec: unknown, path: string, report: Report): FieldSpec | null {
  const start = { errors: 0 };
  const fail: Report = (field, message, fix) => {
    start.errors += 1;
    report(field, message, fix);
  };
  if (!isSnakeName(name)) {
    fail(
      path,
      `field name "${name}" is not snake_case`,
      'start with a-z and use only a-z, 0-9 and _, e.g. time_limit_min.',
    );
  }
  if (!isPlainObject(spec)) {
    fail(
      path,
      `${path} is ${describeValue(spec)}, not a map`,
      'give the field "type:" and "description:" lines, indented under its name.',
    );
    return null;
  }
  for (const key of Object.keys(spec)) {
    if ((fieldKeys as readonly string[]).includes(key)) continue;
    const near = closest(key, fieldKeys);
    fail(
      `${path}.${key}`,
      `"${key}" is not a field property`,
      near ? `did you mean "${near}"?` : `use only ${fieldKeys.join(', ')}.`,
    );
  }
  const type = spec.type;
  if (typeof type !== 'string' || !(fieldTypes as readonly string[]).includes(type)) {
    fail(
      `${path}.type`,
      type === undefined ? 'type is missing' : `type ${JSON.stringify(type)} is not supported`,
      `use one of ${fieldTypes.join(', ')}.`,
    );
    return null;
  }
  const fieldType = type as FieldType;
  if (typeof spec.description !== 'string' || spec.description.trim() === '') {
    fail(
      `${path}.description`,
      'description is missing or empty',
      'say in a sentence what the field holds; the model reads it.',
    );
  }
  if (spec.required !== undefined && typeof spec.required !== 'boolean') {
    fail(`${path}.required`, `required is ${describeValue(spec.required)}`, 'write required: true or required: false.');
  }

  let items: ItemType | undefined;
  if (spec.items !== undefined) {
    if (fieldType !== 'array')
      fail(`${path}.items`, 'items is only for fields of type array', 'remove items, or make the field an array.');
    else if (
      typeof spec.items !== 'string' ||
      spec.items === 'array' ||
      !(fieldTypes as readonly string[]).includes(spec.items)
    ) {
      fail(
        `${path}.items`,
        `items ${JSON.stringify(spec.items)} is not a supported item type`,
        'use one of string, number, integer, boolean, object.',
      );
    } else items = spec.items as ItemType;
  }
  const valueType: FieldType | undefined = fieldType === 'array' ? items : fieldType;

  let enumValues: (string | number)[] | undefined;
  if (spec.enum !== undefined) {
    if (!Array.isArray(spec.enum) || spec.enum.length === 0) {
      fail(
        `${path}.enum`,
        'enum must be a non-empty list',
        'list the allowed values, e.g. enum: [easy, medium, hard].',
      );
    } else if (valueType !== 'string' && valueType !== 'number' && valueType !== 'integer') {
      fail(
        `${path}.enum`,
        `enum needs string, number or integer values, but the field's values are ${valueType ?? 'untyped'}`,
        fieldType === 'array' ? 'add items: string (or number, integer).' : 'remove enum.',
      );
    } else {
      const bad = spec.enum.find((entry) => valueProblem(entry, { type: valueType }) !== null);
      if (bad !== undefined)
        fail(
          `${path}.enum`,
          `enum value ${JSON.stringify(bad)} is not ${article(valueType)}`,
          `make every enum value ${article(valueType)}.`,
        );
      else if (new Set(spec.enum).size !== spec.enum.length)
        fail(`${path}.enum`, 'enum lists a value twice', 'list each value once.');
      else enumValues = spec.enum as (string | number)[];
    }
  }

  const bounds: { minimum?: number; maximum?: number } = {};
  for (const bound of ['minimum', 'maximum'] as const) {
    const raw = spec[bound];
    if (raw === undefined) continue;
    if (fieldType !== 'number' && fieldType !== 'integer')
      fail(`${path}.${bound}`, `${bound} is only for number and integer fields`, `remove ${bound}.`);
    else if (typeof raw !== 'number' || !Number.isFinite(raw))
      fail(`${path}.${bound}`, `${bound} is ${describeValue(raw)}`, `write a number, e.g. ${bound}: 1.`);
    else bounds[bound] = raw;
  }
  if (bounds.minimum !== undefined && bounds.maximum !== undefined && bounds.minimum > bounds.maximum) {
    fail(`${path}.minimum`, `minimum ${bounds.minimum} is greater than maximum ${bounds.maximum}`, 'swap them.');
  }

  const hasDefault = spec.default !== undefined;
  if (hasDefault) {
    const problem = valueProblem(spec.default, { type: fieldType, items, enum: enumValues, ...bounds });
    if (problem)
      fail(`${path}.default`, `default ${problem}`, 'make the default a valid value of the field, or remove it.');
    if (spec.required === true)
      fail(
        `${path}.required`,
        'a required field cannot have a default',
        'remove the default, or write required: false.',
      );
  }
  if (start.errors > 0) return null;
  return {
    name,
    type: fieldType,
    description: (spec.description as string).trim(),
    required: typeof spec.required === 'boolean' ? spec.required : !hasDefault,
    ...(hasDefault ? { default: spec.default as JsonValue } : {}),
    ...(enumValues ? { enum: enumValues } : {}),
    ...(items ? { items } : {}),
    ...bounds,
  };
}

function article(type: string): string {
  return /^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`;
}

/** Why a value does not fit a field (`"ten" is a string, not an integer`), or null when it does. */
export function valueProblem(
  value: unknown,
  field: Pick<FieldSpec, 'type' | 'items' | 'enum' | 'minimum' | 'maximum'>,
): string | null {
  const checked = validateJson(value, fieldToJsonSchema({ ...field, description: '' }), {
    path: JSON.stringify(value),
  });
  return checked.ok ? null : checked.problems[0].message;
}
