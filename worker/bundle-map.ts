/** The comment with which a workflow bundle carries its source map: the SDK requires it inline, as base64 data. */
const inlineMapComment = '//# sourceMappingURL=data:';
const base64Tag = 'base64,';

/**
 * The bundle without its sources' text in its inline source map: stack traces need only the mappings (the SDK reads
 * the text only for the enhanced stack trace query with `showStackTraceSources`, which the worker leaves off), and the
 * worker holds the bundle in both its threads (the text was 1.3 MB of the map's base64, on 2.9 MB of bundle). A bundle
 * without an inline base64 map is returned as it is (the SDK then refuses it with its own error).
 */
export function withoutSourcesContent(code: string): string {
  const at = code.lastIndexOf(inlineMapComment);
  const data = at < 0 ? -1 : code.indexOf(base64Tag, at);
  if (data < 0) return code;
  const map = JSON.parse(Buffer.from(code.slice(data + base64Tag.length).trim(), 'base64').toString('utf8')) as Record<
    string,
    unknown
  >;
  delete map.sourcesContent;
  return `${code.slice(0, data + base64Tag.length)}${Buffer.from(JSON.stringify(map)).toString('base64')}\n`;
}
