import { schemaOfValues, unsupportedKeywords, validateJson, type JsonSchema } from '../core/json-validator';
import { fieldsToJsonSchema } from '../core/skills';

/** The one validator (core/json-validator.ts), rule by rule, on the schemas skillflow produces. */

const examParams: JsonSchema = fieldsToJsonSchema([
  {
    name: 'question_count',
    type: 'integer',
    description: 'How many',
    required: false,
    default: 10,
    minimum: 1,
    maximum: 50,
  },
  {
    name: 'types',
    type: 'array',
    items: 'string',
    enum: ['choice', 'essay'],
    description: 'Types',
    required: false,
    default: ['choice'],
  },
  { name: 'difficulty', type: 'string', enum: ['easy', 'hard'], description: 'Difficulty', required: true },
  { name: 'ratio', type: 'number', description: 'Ratio', required: false },
  { name: 'strict', type: 'boolean', description: 'Strict', required: false },
  { name: 'extra', type: 'object', description: 'Extra', required: false },
]);

describe('the JSON validator', () => {
  it.each([
    [
      'a valid value',
      { difficulty: 'easy', question_count: 3, types: ['essay'], ratio: 0.5, strict: true, extra: { any: 1 } },
      [],
    ],
    [
      'an integer with a fraction',
      { difficulty: 'easy', question_count: 2.5 },
      [['question_count', 'type', 'integer', 'question_count is a number with a fraction, not an integer']],
    ],
    [
      'a string for a number',
      { difficulty: 'easy', ratio: '1' },
      [['ratio', 'type', 'number', 'ratio is a string, not a number']],
    ],
    [
      'a number for a boolean',
      { difficulty: 'easy', strict: 1 },
      [['strict', 'type', 'boolean', 'strict is a number, not a boolean']],
    ],
    [
      'a list for an object',
      { difficulty: 'easy', extra: [] },
      [['extra', 'type', 'object', 'extra is a list, not an object']],
    ],
    [
      'null for an array',
      { difficulty: 'easy', types: null },
      [['types', 'type', 'array', 'types is null, not an array']],
    ],
    [
      'a map for a string',
      { difficulty: { level: 1 } },
      [['difficulty', 'type', 'string', 'difficulty is a map, not a string']],
    ],
    [
      'a value not in the enum',
      { difficulty: 'medium' },
      [['difficulty', 'enum', ['easy', 'hard'], 'difficulty is "medium", not one of "easy", "hard"']],
    ],
    [
      'bad items, by index',
      { difficulty: 'easy', types: ['bogus', 42] },
      [
        ['types[0]', 'enum', ['choice', 'essay'], 'types[0] is "bogus", not one of "choice", "essay"'],
        ['types[1]', 'type', 'string', 'types[1] is a number, not a string'],
      ],
    ],
    [
      'below the minimum',
      { difficulty: 'easy', question_count: -5 },
      [['question_count', 'minimum', { minimum: 1, maximum: 50 }, 'question_count is -5, below the minimum 1']],
    ],
    [
      'above the maximum',
      { difficulty: 'easy', question_count: 500 },
      [['question_count', 'maximum', { minimum: 1, maximum: 50 }, 'question_count is 500, above the maximum 50']],
    ],
    ['a missing required property', {}, [['difficulty', 'required', undefined, 'difficulty is required']]],
    [
      'an unknown property',
      { difficulty: 'easy', essays: false },
      [
        [
          'essays',
          'additionalProperties',
          ['question_count', 'types', 'difficulty', 'ratio', 'strict', 'extra'],
          'essays is not allowed here; the allowed names are question_count, types, difficulty, ratio, strict, extra',
        ],
      ],
    ],
    ['not an object at all', 'x', [['', 'type', 'object', 'the value is a string, not an object']]],
  ])('%s', (_name, value, expected) => {
    const result = validateJson(value, examParams);
    const problems = result.ok ? [] : result.problems.map((p) => [p.path, p.rule, p.allowed, p.message]);
    expect(problems).toEqual(expected);
    expect(result.ok).toBe(expected.length === 0);
  });

  it('prefixes paths, and applies defaults to a copy when asked', () => {
    const proposed = { difficulty: 'hard' };
    const result = validateJson(proposed, examParams, { path: 'params', applyDefaults: true });
    expect(result).toEqual({ ok: true, value: { difficulty: 'hard', question_count: 10, types: ['choice'] } });
    expect(proposed).toEqual({ difficulty: 'hard' });
    expect(validateJson({}, examParams, { path: 'params' })).toMatchObject({
      ok: false,
      problems: [{ path: 'params.difficulty', message: 'params.difficulty is required' }],
    });
  });

  it('bounds the depth of nesting', () => {
    const schema: JsonSchema = { type: 'array', items: { type: 'array', items: { type: 'array' } } };
    expect(validateJson([[[1]]], schema, { maxDepth: 1 })).toMatchObject({
      ok: false,
      problems: [{ path: '[0][0]', rule: 'depth', message: '[0][0] is nested more than 1 levels deep' }],
    });
    let deep: unknown = 1;
    const nested: JsonSchema = { type: 'array' };
    let schemaDeep: JsonSchema = nested;
    for (let i = 0; i < 40; i++) {
      deep = [deep];
      schemaDeep = { type: 'array', items: schemaDeep };
    }
    expect(validateJson(deep, schemaDeep)).toMatchObject({ ok: false, problems: [{ rule: 'depth' }] });
  });

  it('reads the null type, schemas without a type, and objects with no properties allowed', () => {
    expect(validateJson(null, { type: 'null' }).ok).toBe(true);
    expect(validateJson(7, {}).ok).toBe(true);
    expect(validateJson({ a: { b: 1 } }, { type: 'object', properties: { a: { type: 'object' } } }).ok).toBe(true);
    expect(validateJson({ a: 1 }, { type: 'object', additionalProperties: false })).toMatchObject({
      problems: [{ message: 'a is not allowed here; nothing may be set here' }],
    });
    expect(validateJson({}, { type: 'object', required: ['a'] })).toMatchObject({
      problems: [{ path: 'a', rule: 'required' }],
    });
    expect(validateJson({ a: 1 }, { type: 'object', properties: { a: { type: 'integer', maximum: 5 } } }).ok).toBe(
      true,
    );
    expect(validateJson({ a: 1, b: 2 }, { type: 'object', properties: { a: { type: 'integer' } } })).toEqual({
      ok: true,
      value: { a: 1, b: 2 },
    });
  });

  it('derives the schema of values nobody declared: their keys and JSON types', () => {
    expect(schemaOfValues({ s: 'x', n: 1, b: true, l: [], m: {}, z: null })).toEqual({
      type: 'object',
      properties: {
        s: { type: 'string' },
        n: { type: 'number' },
        b: { type: 'boolean' },
        l: { type: 'array' },
        m: { type: 'object' },
        z: { type: 'null' },
      },
      additionalProperties: false,
    });
  });

  describe('reads only own names, and no value sets what a result inherits', () => {
    const withConstructor: JsonSchema = fieldsToJsonSchema([
      { name: 'constructor', type: 'string', description: 'Who builds it', required: true },
      { name: 'level', type: 'integer', description: 'Level', required: false, default: 1 },
    ]);

    it('treats inherited names (constructor, toString, hasOwnProperty) as undeclared', () => {
      const result = validateJson({ level: 2, toString: 'x', hasOwnProperty: 1 }, withConstructor);
      expect(result.ok ? [] : result.problems.map((p) => [p.path, p.rule])).toEqual([
        ['toString', 'additionalProperties'],
        ['hasOwnProperty', 'additionalProperties'],
        ['constructor', 'required'],
      ]);
      expect(validateJson({ constructor: 'Ada' }, withConstructor, { applyDefaults: true })).toEqual({
        ok: true,
        value: { constructor: 'Ada', level: 1 },
      });
    });

    it('refuses __proto__ in every object it checks, and returns results without a prototype', () => {
      const value = JSON.parse('{"level": 2, "__proto__": {"constructor": "Ada", "admin": true}}') as Record<
        string,
        unknown
      >;
      const result = validateJson(value, withConstructor);
      expect(result.ok ? [] : result.problems.map((p) => [p.path, p.rule, p.message])).toEqual([
        [
          '__proto__',
          'additionalProperties',
          '__proto__ is not allowed: __proto__ is never a property name (it would set what the object inherits)',
        ],
        ['constructor', 'required', 'constructor is required'],
      ]);
      const checked = result.value as Record<string, unknown>;
      expect([Object.getPrototypeOf(checked), checked.admin, Object.keys(checked)]).toEqual([
        null,
        undefined,
        ['level'],
      ]);
      const nested = JSON.parse('{"m": {"__proto__": {"admin": true}}}') as unknown;
      expect(validateJson(nested, { type: 'object', properties: { m: { type: 'object' } } })).toMatchObject({
        ok: false,
        problems: [{ path: 'm.__proto__', rule: 'additionalProperties' }],
      });
      const undeclared = schemaOfValues(JSON.parse('{"__proto__": {"type": "string"}}') as Record<string, unknown>);
      expect([Object.getPrototypeOf(undeclared.properties), Object.keys(undeclared.properties ?? {})]).toEqual([
        null,
        ['__proto__'],
      ]);
    });
  });

  const toolInput: JsonSchema = {
    type: 'object',
    properties: {
      url: { type: 'string', minLength: 8, maxLength: 12 },
      tags: { type: 'array', minItems: 1, maxItems: 2, items: { type: 'string' } },
    },
  };
  it.each([
    ['lengths within bounds', { url: 'https://a.b', tags: ['x'] }, []],
    [
      'a string too short',
      { url: 'http://' },
      [['url', 'minLength', { minLength: 8 }, 'url is 7 characters long, shorter than 8']],
    ],
    [
      'a string too long',
      { url: 'https://example.com' },
      [['url', 'maxLength', { maxLength: 12 }, 'url is 19 characters long, longer than 12']],
    ],
    ['code points, not UTF-16 units', { url: '😀'.repeat(12) }, []],
    ['too few items', { tags: [] }, [['tags', 'minItems', { minItems: 1 }, 'tags has 0 items, fewer than 1']]],
    [
      'too many items',
      { tags: ['a', 'b', 'c'] },
      [['tags', 'maxItems', { maxItems: 2 }, 'tags has 3 items, more than 2']],
    ],
  ])('tool inputs: %s', (_name, value, expected) => {
    const result = validateJson(value, toolInput);
    expect(result.ok ? [] : result.problems.map((p) => [p.path, p.rule, p.allowed, p.message])).toEqual(expected);
  });

  it('names the keywords it would ignore, nested ones by path', () => {
    expect(unsupportedKeywords(toolInput)).toEqual([]);
    expect(
      unsupportedKeywords({
        type: 'object',
        title: 'T',
        description: 'd',
        default: {},
        additionalProperties: false,
        required: [],
      }),
    ).toEqual([]);
    const loose = {
      type: 'object',
      properties: { url: { type: 'string', format: 'uri' }, list: { type: 'array', items: { anyOf: [] } } },
      $schema: 'x',
    } as unknown as JsonSchema;
    expect(unsupportedKeywords(loose)).toEqual(['properties.url.format', 'properties.list.items.anyOf', '$schema']);
  });
});
