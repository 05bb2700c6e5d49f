import { estimateTokens } from '../core/compaction';
import { jsonOnce, pairJsonLength } from '../core/json-once';

const system = [{ type: 'text', text: 'You are skillflow. «Skills»: exam-mode-tuner ✓ "quoted"' }];
const tools = [
  { name: 'load_skill', description: 'Loads a skill', input_schema: { type: 'object', properties: { name: { type: 'string' } } } },
  { name: 'submit_output', description: 'Hands in the output', input_schema: { type: 'object', properties: {} } },
];

describe('jsonOnce and pairJsonLength (a round serializes its system prompt and tool definitions once)', () => {
  it.each([
    ['system blocks and tool definitions', system, tools],
    ['no tools', system, []],
    ['an empty system prompt', [], tools],
  ])('%s: the same text and length as JSON.stringify, and the same context estimate', (_name, first, second) => {
    expect(jsonOnce(first)).toBe(JSON.stringify(first));
    expect(pairJsonLength(first, second)).toBe(JSON.stringify([first, second]).length);
    for (const charsPerToken of [1.5, 3.5, 8]) {
      expect(Math.ceil(pairJsonLength(first, second) / charsPerToken)).toBe(estimateTokens([first, second], charsPerToken));
    }
  });

  it('serializes an object once: a later change to it is not seen (callers pass only what they never change)', () => {
    const value = { text: 'before' };
    expect(jsonOnce(value)).toBe('{"text":"before"}');
    value.text = 'after';
    expect(jsonOnce(value)).toBe('{"text":"before"}');
    expect(jsonOnce({ text: 'after' })).toBe('{"text":"after"}');
  });
});
