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
    const joined = this.parts.join('').replace(/^(?:[ \t]*\n)+/, '');
    return this.endsWithBlock ? joined.replace(/\n+$/, '') : joined.trimEnd();
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
    this.parts.push(this.text.join('').replace(/[ \t]+$/gm, '').replace(/\n{3,}/g, '\n\n'));
    this.text.length = 0;
  }
}
