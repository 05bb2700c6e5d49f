import MarkdownIt from 'markdown-it';

/**
 * The block structure of a markdown text, by line, from markdown-it's CommonMark block parser (linear time, unlike
 * most inline parsers): code blocks (fenced or indented, at any depth of lists and block quotes), raw HTML blocks,
 * and everything else. Paragraphs and headings are one unit each, since a code span or an HTML tag may span their
 * lines; every other line is a unit of its own.
 */

export type UnitKind = 'code' | 'html' | 'prose';

export interface Unit {
  kind: UnitKind;
  /** Line range, end excluded. */
  start: number;
  end: number;
}

const parser = new MarkdownIt('commonmark');
// Structure as CommonMark has it: a definition whose URL markdown-it would refuse is still a definition.
parser.validateLink = () => true;

const kindOfToken: Record<string, UnitKind> = {
  fence: 'code',
  code_block: 'code',
  html_block: 'html',
  paragraph_open: 'prose',
  heading_open: 'prose',
};

export function markdownUnits(text: string): Unit[] {
  const lineCount = text.split('\n').length;
  const unitAt = new Array<Unit | undefined>(lineCount).fill(undefined);
  const tokens: ReturnType<typeof parser.parse> = [];
  parser.block.parse(text, parser, {}, tokens);
  for (const token of tokens) {
    const kind = kindOfToken[token.type];
    if (!kind || !token.map) continue;
    const [start, end] = token.map;
    const unit: Unit = { kind, start, end: Math.min(end, lineCount) };
    for (let line = start; line < unit.end; line += 1) unitAt[line] = unit;
  }
  const units: Unit[] = [];
  for (let line = 0; line < lineCount;) {
    const unit = unitAt[line] ?? { kind: 'prose', start: line, end: line + 1 };
    units.push(unit);
    line = unit.end;
  }
  return units;
}
