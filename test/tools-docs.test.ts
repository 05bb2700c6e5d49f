import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

/**
 * docs/tools.md's worked example works as written: its code block, saved as a module of a tools folder inside the
 * project (where `skillflow/tools` resolves), loads in a Node process with tsx the way the worker loads it, registers
 * word_count, and runs.
 */
const root = path.resolve(__dirname, '..');

function docExample(): string {
  const docs = fs.readFileSync(path.join(root, 'docs', 'tools.md'), 'utf8');
  const match = /<!-- example: tools\/word-count\.ts -->\n```ts\n([\s\S]*?)```/.exec(docs);
  if (!match) throw new Error('docs/tools.md has no word-count example');
  return match[1];
}

describe("docs/tools.md's worked example", () => {
  fs.mkdirSync(path.join(root, '.cache'), { recursive: true });
  const dir = fs.mkdtempSync(path.join(root, '.cache', 'tools-docs-'));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('loads from a tools folder and runs, its input validated by the schema it declares', () => {
    fs.writeFileSync(path.join(dir, 'word-count.ts'), docExample());
    const script = `
      const { loadToolModules } = require(${JSON.stringify(path.join(root, 'lib/tools/modules'))});
      const { ToolRegistry } = require(${JSON.stringify(path.join(root, 'lib/tools/registry'))});
      const { validateJson } = require(${JSON.stringify(path.join(root, 'core/json-validator'))});
      (async () => {
        const tools = await loadToolModules(${JSON.stringify(dir)});
        const registry = new ToolRegistry(tools);
        const spec = registry.get('word_count').spec;
        const context = { attempt: 1, signal: new AbortController().signal, heartbeat() {} };
        const input = validateJson({ text: 'One two three. Four five!' }, spec.inputSchema, { applyDefaults: true });
        const bad = validateJson({ text: '' }, spec.inputSchema);
        const run = await registry.run({ name: 'word_count', input: { text: 'One two three. Four five!', perSentence: true }, callId: 'c' }, context);
        process.stdout.write(JSON.stringify({ spec, input, bad, run }));
      })().catch((err) => { console.error(err); process.exit(1); });`;
    const out = JSON.parse(
      execFileSync(process.execPath, ['--import', pathToFileURL(require.resolve('tsx')).href, '-e', script], {
        cwd: root,
        encoding: 'utf8',
      }),
    );
    expect(out.spec).toMatchObject({
      name: 'word_count',
      category: 'text',
      source: 'custom',
      idempotent: true,
      needsApproval: false,
      activity: { timeoutMs: 5000, maxAttempts: 3 },
    });
    expect(out.spec.inputSchema).toEqual({
      type: 'object',
      additionalProperties: false,
      properties: {
        text: { type: 'string', minLength: 1, maxLength: 100_000, description: 'The text to count' },
        perSentence: { type: 'boolean', default: false, description: 'Also give the words of each sentence' },
      },
      required: ['text'],
    });
    expect(out.input).toEqual({ ok: true, value: { text: 'One two three. Four five!', perSentence: false } });
    expect(out.bad).toMatchObject({ ok: false, problems: [{ path: 'text', rule: 'minLength' }] });
    expect(out.run).toEqual({ isError: false, content: '5 words, 2 sentences, 25 characters\n1: 3 words\n2: 2 words' });
  });
});
