import type { ToolDefinition } from '../core/messages';
import { digestOf } from '../core/transcript';
import { toolsDigest } from '../workflows/model-call';

const tool = (name: string): ToolDefinition => ({
  name,
  description: `the ${name} tool`,
  input_schema: { type: 'object', properties: {} },
});

describe('toolsDigest (the digest of the last tool definitions seen, kept while their JSON text stays the same)', () => {
  it.each([
    ['the first set', [tool('a'), tool('b')]],
    ['the same set rebuilt', [tool('a'), tool('b')]],
    ['a tool granted', [tool('a'), tool('b'), tool('c')]],
    ['a tool withdrawn', [tool('a')]],
    ['the first set again', [tool('a'), tool('b')]],
    ['none', []],
  ])('%s: equals digestOf of the definitions', (_name, tools) => {
    expect(toolsDigest(tools)).toBe(digestOf(tools));
  });
});
