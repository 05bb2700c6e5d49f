/**
 * Markdown that makes a careless sanitizer quadratic, pattern by pattern, and plain prose to compare it with: used by
 * test/skills/sanitize.test.ts (each pattern against plain prose at one large size) and by `npm run bench`
 * (bench/sanitizer.ts: how the time grows when the input doubles).
 */
const repeat = (unit: string, length: number) => unit.repeat(Math.ceil(length / unit.length)).slice(0, length);

/** Inputs of `length` characters on which a pass that backtracks or rescans takes quadratic time. */
export const adversarialPatterns: Record<string, (length: number) => string> = {
  'link opener then spaces': (n) => `](${' '.repeat(n - 2)}`,
  'definition then spaces': (n) => `[a]:${' '.repeat(n - 4)}`,
  'definitions of spaces': (n) => repeat('[a]:    \n', n),
  'link openers': (n) => repeat('[a](', n),
  'script links': (n) => repeat('](javascript:', n),
  'unclosed comments': (n) => repeat('<!--', n),
  'nested comments': (n) => repeat('<<!-- -->!--', n),
  'unclosed tags': (n) => repeat('<a ', n),
  'attributes never closed': (n) => `<a${repeat(' b="<a"', n - 2)}`,
  'quotes inside tags': (n) => repeat('<a x="<a y=\'', n),
  'closing tags never closed': (n) => repeat('</a', n),
  'lone angle brackets': (n) => repeat('<', n),
  'angle brackets and letters': (n) => repeat('<a', n),
  'unclosed autolinks': (n) => repeat('<http://a', n),
  'unclosed email autolinks': (n) => repeat('<a@b', n),
  'backtick runs of growing length': (n) => {
    let text = '';
    for (let run = 1; text.length < n; run += 1) text += `${'`'.repeat(run)}a`;
    return text.slice(0, n);
  },
  'backtick pairs': (n) => repeat('`a``', n),
  'unclosed scripts': (n) => repeat('<script>', n),
  'an HTML block of unclosed tags': (n) => `<div>\n${repeat('<a ', n - 6)}`,
  'an HTML block of unclosed comments': (n) => `<div>\n${repeat('<!--', n - 6)}`,
  'processing instructions': (n) => repeat('<?', n),
  'entities in a link': (n) => `](${repeat('&#0;', n - 2)}`,
  'escaped angle brackets': (n) => repeat('\\<', n),
  'fences around HTML': (n) => repeat('```\n<b>\n', n),
  'indented HTML': (n) => repeat('    <div>x</div>\n', n),
  'nested block quotes': (n) => repeat('> ', n),
  'code that removing HTML turns into prose': (n) => repeat('<b></b>- a\n\n    <script>x</script>\n\n', n),
  // Blanks that do not end their line: every pass that trims line ends must not try each of them as a start.
  'text, blanks, text': (n) => `a${' '.repeat(n - 2)}b`,
  'text, tabs, text': (n) => `a${'\t'.repeat(n - 2)}b`,
  'a code span of blanks': (n) => `\`${' '.repeat(n - 2)}\``,
  'a list item of blanks': (n) => `- a${' '.repeat(n - 4)}b`,
  'a block quote of blanks': (n) => `> a${' '.repeat(n - 4)}b`,
  // Each `<a\n>` is a tag: what is left is `>`, a line of blanks, and `\<a`.
  'block quotes of HTML': (n) => repeat('> <a\n', n),
  // Newlines that do not end the text: trimming the end of a text ending in code must not try each of them.
  'a fence of blank lines': (n) => `\`\`\`\n${'\n'.repeat(n - 7)}\`\`\``,
  'indented code with blank lines': (n) => `    a${'\n'.repeat(n - 10)}    b`,
};

/** Plain prose of `n` characters: the baseline each pattern is compared with, in the same run. */
export const plainProse = (n: number) =>
  repeat('Plain prose, as most skills are: words, **emphasis**, a [link](https://example.com).\n', n);
