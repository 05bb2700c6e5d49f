import { isMap, isScalar, parseDocument, type Node } from 'yaml';

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

/**
 * The source text of the scalars YAML reads as something other than a string, at the top level and one level down
 * (`version` -> `1.0`, `metadata.version` -> `1.10`), so a fix can quote what was written rather than what YAML made of
 * it. Empty for text that does not parse (its error is reported elsewhere).
 */
export function scalarSources(text: string): Record<string, string> {
  const sources: Record<string, string> = {};
  const doc = parseDocument(text, { schema: 'core' });
  const walk = (node: unknown, prefix: string, depth: number) => {
    if (!isMap(node)) return;
    for (const pair of node.items) {
      const key = isScalar(pair.key) ? String(pair.key.value) : null;
      if (key === null) continue;
      const value = pair.value as Node | null;
      if (isScalar(value) && typeof value.value !== 'string' && typeof value.source === 'string')
        sources[`${prefix}${key}`] = value.source;
      else if (depth > 0) walk(value, `${prefix}${key}.`, depth - 1);
    }
  };
  if (doc.errors.length === 0) walk(doc.contents, '', 1);
  return sources;
}
