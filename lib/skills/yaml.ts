import { parseDocument } from 'yaml';

export class YamlSyntaxError extends Error {
  override name = 'YamlSyntaxError';
  constructor(
    readonly reason: string,
    readonly line: number | null,
  ) {
    super(line === null ? reason : `${reason} (line ${line})`);
  }
}

/**
 * YAML 1.2 core schema, strictly: duplicate keys, unknown tags (`!!js/function` and friends) and any other warning
 * are errors, and aliases are capped so a small file cannot expand into a huge one.
 */
export function parseStrictYaml(text: string): unknown {
  const doc = parseDocument(text, { schema: 'core', strict: true, uniqueKeys: true, prettyErrors: true, merge: false });
  const issue = doc.errors[0] ?? doc.warnings[0];
  if (issue) {
    const reason = issue.message.split('\n')[0].replace(/ at line \d+, column \d+:?$/, '');
    throw new YamlSyntaxError(reason, issue.linePos?.[0].line ?? null);
  }
  try {
    return doc.toJS({ maxAliasCount: 50 });
  } catch (error) {
    throw new YamlSyntaxError((error as Error).message, null);
  }
}
