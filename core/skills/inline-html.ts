import { isAllowedUrl } from './link-destinations';

/**
 * Removes HTML from one unit of markdown text (a paragraph, a heading, a line, or an HTML block), keeping code spans
 * verbatim. One left-to-right pass: every search for a closing delimiter is memoized per unit, so a unit full of
 * unclosed `<!--` or lone backtick runs costs linear time, never quadratic.
 *
 * Two readings, as CommonMark has them:
 * - prose: inline raw HTML per the CommonMark grammar; `<` that starts no construct stays text, and is escaped (`\<`)
 *   when what follows it could make it start one once the HTML after it is gone;
 * - html: an HTML block (raw HTML, no code spans or escapes); anything a browser would treat as markup (a tag,
 *   comment or declaration left open) is removed to its end or to the end of the block.
 */

/** Where a unit's output goes, in order: prose (HTML removed) and code spans (verbatim). */
export interface UnitSink {
  prose(text: string): void;
  code(text: string): void;
}
/** `flat` is prose without code spans: the fallback that reads a whole document as text. */
export type UnitMode = 'prose' | 'html' | 'flat';

/** Elements removed with their content: a browser never shows it, so the model must not read it either. */
const droppedElements = new Set([
  'script',
  'style',
  'iframe',
  'object',
  'embed',
  'template',
  'noscript',
  'svg',
  'math',
  'textarea',
  'title',
  'xmp',
  'noembed',
  'noframes',
  'plaintext',
]);

const openTag =
  /<([A-Za-z][A-Za-z0-9-]*)(?:\s+[A-Za-z_:][A-Za-z0-9_.:-]*(?:\s*=\s*(?:[^\s"'=<>`]+|'[^']*'|"[^"]*"))?)*\s*\/?>/y;
const closeTag = /<\/[A-Za-z][A-Za-z0-9-]*\s*>/y;
const uriAutolink = /<([A-Za-z][A-Za-z0-9+.-]{1,31}:[^\s<>\u0000-\u001f]*)>/y;
const emailAutolink =
  /<[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*>/y;
const plainRun = /[^\\`<]+/y;
const asciiPunctuation = /[!-/:-@[-`{-~]/;
/** After a `<`, these could start a construct this scanner removes (tag, closing tag, comment, declaration, PI). */
const riskyAfterLt = /[A-Za-z/!?]/;
/** What may follow `<` in any construct: a tag, comment, declaration, PI, or a URI or email autolink. */
const mayStartConstruct = /[A-Za-z0-9/!?.#$%&'*+=^_`{|}~-]/;

export function sanitizeUnit(text: string, mode: UnitMode, sink: UnitSink): void {
  new UnitScanner(text, mode, sink).run();
}

class UnitScanner {
  /** The prose since the last code span, in parts joined once; text copied from the unit grows one range. */
  private readonly prose: string[] = [];
  private rangeStart = 0;
  private rangeEnd = -1;
  /** Where a `<` waits to learn what follows it in the output (-1: none). */
  private pendingLt = -1;
  private trailingBackslashes = 0;
  private readonly found = new Map<string, number>();
  private readonly closings = new Map<string, { start: number; end: number }>();
  private backtickRuns: Map<number, number[]> | undefined;
  private readonly runCursor = new Map<number, number>();

  constructor(
    private readonly text: string,
    private readonly mode: UnitMode,
    private readonly sink: UnitSink,
  ) {}

  run(): void {
    const { text } = this;
    let i = 0;
    while (i < text.length) {
      const c = text[i];
      if (c === '\\' && this.mode !== 'html' && i + 1 < text.length && asciiPunctuation.test(text[i + 1])) {
        this.copy(i, i + 2);
        i += 2;
      } else if (c === '`' && this.mode === 'prose') {
        i = this.codeSpan(i);
      } else if (c === '<') {
        i = this.angle(i);
      } else {
        plainRun.lastIndex = i;
        const run = plainRun.exec(text);
        const end = run ? i + run[0].length : i + 1;
        this.copy(i, end);
        i = end;
      }
    }
    this.endProse();
  }

  /** A code span from the backtick run at `i`, kept as written; a run with no closing run of its length is text. */
  private codeSpan(i: number): number {
    let length = 1;
    while (this.text[i + length] === '`') length += 1;
    const closer = this.nextRun(length, i + length);
    if (closer === -1) {
      this.copy(i, i + length);
      return i + length;
    }
    this.endProse();
    this.sink.code(this.text.slice(i, closer + length));
    return closer + length;
  }

  /** The next backtick run of exactly `length` starting at or after `from`, or -1; amortized O(1). */
  private nextRun(length: number, from: number): number {
    if (!this.backtickRuns) this.backtickRuns = indexBacktickRuns(this.text);
    const starts = this.backtickRuns.get(length);
    if (!starts) return -1;
    let cursor = this.runCursor.get(length) ?? 0;
    while (cursor < starts.length && starts[cursor] < from) cursor += 1;
    this.runCursor.set(length, cursor);
    return cursor < starts.length ? starts[cursor] : -1;
  }

  private angle(i: number): number {
    const { text } = this;
    const html = this.mode === 'html';
    if (!mayStartConstruct.test(text[i + 1] ?? ' ')) return this.literalLt(i);
    const delimited = (open: string, close: string): number | null => {
      if (!text.startsWith(open, i)) return null;
      const end = this.next(close, i + open.length);
      if (end !== -1) return end + close.length;
      return html ? text.length : -1;
    };
    for (const [open, close] of commentLike) {
      if (open === '<!--' && (text.startsWith('<!-->', i) || text.startsWith('<!--->', i)))
        return i + (text[i + 4] === '>' ? 5 : 6);
      const end = delimited(open, close);
      if (end === null) continue;
      if (end !== -1) return end;
      break;
    }
    if (/^<![A-Za-z]/.test(text.slice(i, i + 3))) {
      const end = this.next('>', i + 2);
      if (end !== -1) return end + 1;
      if (html) return text.length;
    }
    const tag = this.stickyAt(openTag, i);
    if (tag) {
      const name = tag[1].toLowerCase();
      const end = i + tag[0].length;
      return droppedElements.has(name) ? this.endOfElement(name, end) : end;
    }
    const close = this.stickyAt(closeTag, i);
    if (close) return i + close[0].length;
    const uri = this.stickyAt(uriAutolink, i);
    if (uri) {
      if (!isAllowedUrl(uri[1])) {
        // Shown as text, not as a link.
        this.flushLt();
        if (this.trailingBackslashes % 2 === 0) this.insert('\\');
      }
      this.copy(i, i + uri[0].length);
      return i + uri[0].length;
    }
    const email = this.stickyAt(emailAutolink, i);
    if (email) {
      this.copy(i, i + email[0].length);
      return i + email[0].length;
    }
    if (html && /^<\/?[A-Za-z]/.test(text.slice(i, i + 3))) {
      // Markup a browser would still read as a tag: removed to its `>`, or to the end of the block.
      const end = this.next('>', i + 1);
      return end === -1 ? text.length : end + 1;
    }
    return this.literalLt(i);
  }

  private literalLt(i: number): number {
    this.flushLt();
    this.pendingLt = i;
    return i + 1;
  }

  /** Past the element's closing tag, or the end of the unit when it is never closed (memoized per element). */
  private endOfElement(name: string, from: number): number {
    const known = this.closings.get(name);
    if (known && (known.end === -1 || known.start >= from)) return known.end === -1 ? this.text.length : known.end;
    const closing = new RegExp(`</${name}\\s*>`, 'gi');
    closing.lastIndex = from;
    const match = closing.exec(this.text);
    this.closings.set(
      name,
      match ? { start: match.index, end: match.index + match[0].length } : { start: -1, end: -1 },
    );
    return match ? match.index + match[0].length : this.text.length;
  }

  /** indexOf, memoized per needle: a needle never found again is not searched for again. */
  private next(needle: string, from: number): number {
    const known = this.found.get(needle);
    if (known !== undefined && (known === -1 || known >= from)) return known;
    const at = this.text.indexOf(needle, from);
    this.found.set(needle, at);
    return at;
  }

  private stickyAt(pattern: RegExp, i: number): RegExpExecArray | null {
    pattern.lastIndex = i;
    return pattern.exec(this.text);
  }

  /** Copies text of the unit to the output; a pending `<` is escaped first when this text could complete a construct. */
  private copy(from: number, to: number): void {
    if (to <= from) return;
    if (this.pendingLt !== -1) {
      const at = this.pendingLt;
      this.pendingLt = -1;
      if (riskyAfterLt.test(this.text[from]) && this.trailingBackslashes % 2 === 0) this.insert('\\');
      this.copyRange(at, at + 1);
    }
    this.copyRange(from, to);
  }

  /** A `<` followed by nothing that could complete a construct with it stays as it is. */
  private flushLt(): void {
    if (this.pendingLt === -1) return;
    const at = this.pendingLt;
    this.pendingLt = -1;
    this.copyRange(at, at + 1);
  }

  private copyRange(from: number, to: number): void {
    if (this.rangeEnd === from) {
      this.rangeEnd = to;
    } else {
      this.flushRange();
      this.rangeStart = from;
      this.rangeEnd = to;
    }
    let k = to - 1;
    while (k >= from && this.text[k] === '\\') k -= 1;
    this.trailingBackslashes = k < from ? this.trailingBackslashes + (to - from) : to - 1 - k;
  }

  /** Text that is not in the unit: a backslash that escapes a `<`. */
  private insert(value: string): void {
    this.flushRange();
    this.prose.push(value);
    this.trailingBackslashes = value === '\\' ? this.trailingBackslashes + 1 : 0;
  }

  private flushRange(): void {
    if (this.rangeEnd !== -1) this.prose.push(this.text.slice(this.rangeStart, this.rangeEnd));
    this.rangeEnd = -1;
  }

  private endProse(): void {
    this.flushLt();
    this.flushRange();
    if (this.prose.length === 1) this.sink.prose(this.prose[0]);
    else if (this.prose.length > 1) this.sink.prose(this.prose.join(''));
    this.prose.length = 0;
    this.trailingBackslashes = 0;
  }
}

const commentLike: Array<[string, string]> = [
  ['<!--', '-->'],
  ['<![CDATA[', ']]>'],
  ['<?', '?>'],
];

function indexBacktickRuns(text: string): Map<number, number[]> {
  const runs = new Map<number, number[]>();
  for (let i = text.indexOf('`'); i !== -1;) {
    let length = 1;
    while (text[i + length] === '`') length += 1;
    const list = runs.get(length) ?? [];
    list.push(i);
    runs.set(length, list);
    i = text.indexOf('`', i + length);
  }
  return runs;
}
