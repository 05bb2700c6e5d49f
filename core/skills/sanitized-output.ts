import type { UnitSink } from './inline-html';
import { neutralizeLinkDestinations } from './link-destinations';

/**
 * Assembles sanitized markdown as the units are scanned, without keeping a list of pieces (a body of many short code
 * spans would otherwise allocate an object per piece and cost more than linear time in garbage collection):
 * - prose between code is link-checked as one run, across units (a definition's URL may be on the next line);
 * - trailing spaces and runs of blank lines go outside code blocks, as do blank lines at the start and the end.
 */
export class SanitizedOutput implements UnitSink {
  private readonly parts: string[] = [];
  /** Text since the last code block: link-checked prose and code spans. */
  private readonly text: string[] = [];
  /** Prose since the last code span or block, link-checked when code or the end comes. */
  private readonly run: string[] = [];
  private endsWithBlock = false;
  private blankSinceMark = true;

  prose(text: string): void {
    if (text === '') return;
    this.run.push(text);
    this.wrote(text);
  }

  code(text: string): void {
    this.flushRun();
    this.text.push(text);
    this.wrote(text);
  }

  /** A code block, left exactly as written. */
  block(text: string): void {
    this.flushRun();
    this.flushText();
    this.parts.push(text);
    this.endsWithBlock = true;
    if (this.blankSinceMark && /\S/.test(text)) this.blankSinceMark = false;
  }

  /** Starts watching for output that is not blank (see `blankSinceMark`). */
  mark(): void {
    this.blankSinceMark = true;
  }

  /** Whether everything written since `mark()` was blank. */
  isBlankSinceMark(): boolean {
    return this.blankSinceMark;
  }

  finish(): string {
    this.flushRun();
    this.flushText();
    const joined = withoutLeadingBlankLines(this.parts.join(''));
    return this.endsWithBlock ? withoutTrailingNewlines(joined) : joined.trimEnd();
  }

  private wrote(text: string): void {
    this.endsWithBlock = false;
    if (this.blankSinceMark && /\S/.test(text)) this.blankSinceMark = false;
  }

  private flushRun(): void {
    if (this.run.length === 0) return;
    this.text.push(neutralizeLinkDestinations(this.run.length === 1 ? this.run[0] : this.run.join('')));
    this.run.length = 0;
  }

  private flushText(): void {
    if (this.text.length === 0) return;
    this.parts.push(withoutTrailingBlanks(this.text.join('')).replace(/\n{3,}/g, '\n\n'));
    this.text.length = 0;
  }
}

/*
 * Scans, not regular expressions: a backtracking `[ \t]+$` or `\n+$` tries every start in a long run of blanks or
 * newlines that does not end the line or the text, which is quadratic (`a`, 64 KiB of spaces, `b` took 29 s).
 */

/** The text without spaces and tabs before a line terminator or the end, as `/[ \t]+$/gm` would leave it. */
export function withoutTrailingBlanks(text: string): string {
  let out = '';
  let copied = 0;
  let blanks = -1;
  for (let i = 0; i < text.length; i += 1) {
    const code = text.charCodeAt(i);
    if (code === 0x20 || code === 0x09) {
      if (blanks === -1) blanks = i;
      continue;
    }
    if (blanks !== -1 && isLineTerminator(code)) {
      out += text.slice(copied, blanks);
      copied = i;
    }
    blanks = -1;
  }
  if (blanks !== -1) {
    out += text.slice(copied, blanks);
    copied = text.length;
  }
  return copied === 0 ? text : out + text.slice(copied);
}

/** The text from the first line that is not blank (or the last line, when all are). */
function withoutLeadingBlankLines(text: string): string {
  let start = 0;
  for (let i = 0; i < text.length; i += 1) {
    const ch = text[i];
    if (ch === '\n') start = i + 1;
    else if (ch !== ' ' && ch !== '\t') break;
  }
  return text.slice(start);
}

function withoutTrailingNewlines(text: string): string {
  let end = text.length;
  while (end > 0 && text[end - 1] === '\n') end -= 1;
  return text.slice(0, end);
}

/** What `$` in a multiline regular expression stops at. */
function isLineTerminator(code: number): boolean {
  return code === 0x0a || code === 0x0d || code === 0x2028 || code === 0x2029;
}
