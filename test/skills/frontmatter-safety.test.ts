import matter from 'gray-matter';
import { FrontmatterError, grayMatter, parseFrontmatter } from '../../lib/skills';

const payload = (opening: string, flag: string) =>
  `${opening}\n{ name: (function () { globalThis.${flag} = true; return "x"; })(), description: "d" }\n---\n\nBody\n`;

const flags = globalThis as Record<string, unknown>;

describe('front matter is never evaluated as code', () => {
  afterEach(() => {
    for (const key of Object.keys(flags).filter((k) => k.startsWith('SKILLFLOW_FM_'))) delete flags[key];
  });

  it('the payload is live: gray-matter with its defaults runs it (CVE-2022-25863)', () => {
    matter(payload('---js', 'SKILLFLOW_FM_DEFAULT'), {});
    expect(flags.SKILLFLOW_FM_DEFAULT).toBe(true);
  });

  it.each(['---js', '---javascript', '--- js', '---JS', '---Javascript'])(
    'refuses %s before gray-matter sees it',
    (opening) => {
      expect(() => parseFrontmatter(payload(opening, 'SKILLFLOW_FM_PARSE'))).toThrow(FrontmatterError);
      expect(() => parseFrontmatter(payload(opening, 'SKILLFLOW_FM_PARSE'))).toThrow(
        /is refused: only YAML is read, and code is never evaluated/,
      );
      expect(flags.SKILLFLOW_FM_PARSE).toBeUndefined();
    },
  );

  it.each(['---js', '---javascript', '---JS', '---coffee', '---json'])(
    'the gray-matter configuration refuses %s on its own',
    (opening) => {
      expect(() => grayMatter(payload(opening, 'SKILLFLOW_FM_ENGINE'))).toThrow(/front matter in \w+ is refused/);
      expect(flags.SKILLFLOW_FM_ENGINE).toBeUndefined();
    },
  );

  it('parses YAML front matter strictly and returns the body', () => {
    expect(parseFrontmatter('---\nname: a\ndescription: "b: c"\n---\n\n# Body\n')).toEqual({
      data: { name: 'a', description: 'b: c' },
      body: '\n# Body\n',
      sources: {},
    });
    expect(() => parseFrontmatter('---\nname: a\nname: b\n---\n')).toThrow(
      'the front matter is not valid YAML: Map keys must be unique (line 3)',
    );
    expect(() => parseFrontmatter('---\nrun: !!js/function "function () {}"\n---\n')).toThrow(/Unresolved tag/);
  });

  it('does not let YAML aliases blow up', () => {
    const bomb = [
      '---',
      'a: &a [x, x, x, x, x, x, x, x, x, x]',
      ...Array.from(
        { length: 9 },
        (_, i) =>
          `${String.fromCharCode(98 + i)}: &${String.fromCharCode(98 + i)} [*${String.fromCharCode(97 + i)}, *${String.fromCharCode(97 + i)}, *${String.fromCharCode(97 + i)}, *${String.fromCharCode(97 + i)}, *${String.fromCharCode(97 + i)}, *${String.fromCharCode(97 + i)}, *${String.fromCharCode(97 + i)}, *${String.fromCharCode(97 + i)}, *${String.fromCharCode(97 + i)}, *${String.fromCharCode(97 + i)}]`,
      ),
      '---',
      '',
    ].join('\n');
    expect(() => parseFrontmatter(bomb)).toThrow(/alias/i);
  });
});
