import matter from 'gray-matter';
import { parseStrictYaml, scalarSources } from './yaml';

/** Why a markdown file's front matter cannot be read, with the fix. */
export class FrontmatterError extends Error {
  override name = 'FrontmatterError';
  constructor(
    message: string,
    readonly fix: string,
  ) {
    super(message);
  }
}

const refuse = (language: string) => (): object => {
  throw new FrontmatterError(
    `front matter in ${language} is refused: only YAML is read, and code is never evaluated`,
    'start the file with a line holding only --- and write YAML.',
  );
};

/**
 * gray-matter evaluates `---js` / `---javascript` front matter with eval by default (CVE-2022-25863). Every
 * engine but YAML is replaced by one that throws, and YAML goes through the strict parser.
 */
export const safeMatterOptions = {
  language: 'yaml',
  engines: {
    yaml: (text: string) => (parseStrictYaml(text) ?? {}) as object,
    javascript: refuse('javascript'),
    js: refuse('js'),
    json: refuse('json'),
    coffee: refuse('coffee'),
    coffeescript: refuse('coffeescript'),
    cson: refuse('cson'),
    toml: refuse('toml'),
  },
};

export function grayMatter(text: string): { data: unknown; content: string; matter: string } {
  const file = matter(text, safeMatterOptions);
  return { data: file.data, content: file.content, matter: file.matter };
}

const openingLine = /^---[ \t]*\r?$/;

/** Whether the text starts with a front matter block (an opening line of exactly ---, maybe with a language). */
export function hasFrontmatter(text: string): boolean {
  return /^\uFEFF?---/.test(text);
}

/**
 * Splits SKILL.md into parsed front matter and body. The opening line must be exactly `---`: a language tag
 * (`---js`, `--- yaml`) is refused before gray-matter sees the text, and gray-matter's engines refuse again.
 */
export function parseFrontmatter(text: string): { data: unknown; body: string; sources: Record<string, string> } {
  const source = text.replace(/^\uFEFF/, '');
  const firstLine = source.split('\n', 1)[0];
  if (!firstLine.startsWith('---')) {
    throw new FrontmatterError(
      'the file does not start with front matter',
      'put a --- line first, then name: and description: lines, then a closing --- line.',
    );
  }
  if (!openingLine.test(firstLine)) {
    const language = firstLine.slice(3).trim();
    throw new FrontmatterError(
      `front matter language "${language}" is refused: only YAML is read, and code is never evaluated`,
      'make the first line exactly --- and write the front matter in YAML.',
    );
  }
  if (!/\n---[ \t]*(\r?\n|$)/.test(source.slice(firstLine.length))) {
    throw new FrontmatterError(
      'the front matter is never closed',
      'end the front matter with a line holding only ---.',
    );
  }
  try {
    const { data, content, matter: yaml } = grayMatter(source);
    return { data, body: content, sources: scalarSources(yaml) };
  } catch (error) {
    if (error instanceof FrontmatterError) throw error;
    throw new FrontmatterError(
      `the front matter is not valid YAML: ${(error as Error).message}`,
      'fix the YAML syntax; quote values that contain ": " or start with special characters.',
    );
  }
}
