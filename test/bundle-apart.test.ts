import { bundleWorkflowsApart } from '../worker/bundle-apart';
import { withoutSourcesContent } from '../worker/bundle-map';
import { legacyWorkflowTypes } from '../workflows/definitions';

describe('the workflow bundle made in a child process (worker/main.ts)', () => {
  it('holds the workflows and the interceptor modules of a worker with tracing, as the in-process bundle would', async () => {
    const code = await bundleWorkflowsApart(true);
    expect(code).toContain(legacyWorkflowTypes.turn);
    expect(code).toContain('workflows/log-attributes');
    expect(code).toContain('interceptors-opentelemetry/lib/workflow-interceptors');
    // Its inline source map keeps the mappings stack traces use, not the sources' text.
    const map = JSON.parse(
      Buffer.from(code.slice(code.lastIndexOf('base64,') + 'base64,'.length), 'base64').toString('utf8'),
    );
    expect(map.sourcesContent).toBeUndefined();
    expect(map.mappings.length).toBeGreaterThan(1000);
    expect(map.sources).toEqual(
      expect.arrayContaining([
        expect.stringContaining('workflows/turn.ts'),
        expect.stringContaining('workflows/legacy/turn.ts'),
        expect.stringContaining('workflows/legacy/core/policy/reduce.ts'),
      ]),
    );
    // Compiled for ES2022 (worker/bundle-target.ts): object spread, `?.` and class fields as they are, not as swc's
    // ES2017 helpers (the bundle held 182 calls of _object_spread and 133 of _define_property).
    const bundled = code.slice(0, code.lastIndexOf('base64,'));
    for (const helper of [
      '_object_spread(',
      '_object_spread_props(',
      '_define_property(',
      '_object_without_properties(',
    ])
      expect({ helper, found: bundled.includes(helper) }).toEqual({ helper, found: false });
  }, 180_000);
});

describe("a bundle without its sources' text (worker/bundle-map.ts)", () => {
  const marker = '//# sourceMappingURL=data:application/json;charset=utf-8;base64,';
  const mapOf = (code: string) =>
    JSON.parse(Buffer.from(code.slice(code.lastIndexOf(marker) + marker.length), 'base64').toString('utf8'));

  it('drops sourcesContent from the inline map and keeps the code and every other field', () => {
    const map = {
      version: 3,
      file: 'workflow-bundle.js',
      sources: ['a.ts'],
      sourcesContent: ['const a = 1; // →'],
      names: ['a'],
      mappings: 'AAAA',
    };
    const code = `var a = 1;\n${marker}${Buffer.from(JSON.stringify(map)).toString('base64')}`;
    const out = withoutSourcesContent(code);
    expect(out.startsWith('var a = 1;\n')).toBe(true);
    expect(mapOf(out)).toEqual({
      version: 3,
      file: 'workflow-bundle.js',
      sources: ['a.ts'],
      names: ['a'],
      mappings: 'AAAA',
    });
  });

  it('leaves a bundle without an inline map as it is', () => {
    expect(withoutSourcesContent('var a = 1;\n')).toBe('var a = 1;\n');
  });
});
