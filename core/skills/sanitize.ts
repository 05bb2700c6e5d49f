import { sanitizeUnit, type Piece } from './inline-html';
import { neutralizeLinkDestinations } from './link-destinations';
import { markdownUnits } from './markdown-blocks';

/**
 * Skill text is untrusted input (seed 003): keep the markdown, drop HTML. Code (fenced and indented blocks, inline
 * spans) is kept verbatim, since markdown shows it as text; everywhere else comments, script-like elements with their
 * content, and all other tags (keeping their text) are removed, and links may point only at http(s), mailto and tel
 * URLs or relative paths.
 *
 * Linear time: markdown-it's block parser finds the code and HTML blocks, and one memoized pass per block does the
 * rest. The result is a fixed point (sanitizing it again changes nothing): when removing HTML changed the block
 * structure so that a second pass would read code as prose, the whole text is sanitized as prose instead.
 */
export function sanitizeMarkdown(text: string): string {
  const normalized = text
    .replace(/^\uFEFF/, '')
    .replace(/\r\n?/g, '\n')
    .replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F]/g, '');
  const once = sanitizeBlocks(normalized);
  if (sanitizeBlocks(once) === once) return once;
  return tidy([{ code: false, text: neutralizeLinkDestinations(joinText(sanitizeUnit(normalized, 'flat'))) }]);
}

/** A piece of output; `block` marks a code block, which tidying leaves exactly as written. */
type Chunk = Piece & { block?: boolean };

function sanitizeBlocks(text: string): string {
  const lines = text.split('\n');
  const chunks: Chunk[] = [];
  for (const unit of markdownUnits(text)) {
    if (chunks.length > 0) chunks.push({ code: false, text: '\n' });
    const source = lines.slice(unit.start, unit.end).join('\n');
    if (unit.kind === 'code') {
      chunks.push({ code: true, block: true, text: source });
      continue;
    }
    const pieces = sanitizeUnit(source, unit.kind === 'html' ? 'html' : 'prose');
    for (const piece of pieces) chunks.push(piece);
    // What is left of an HTML block must not run into the next line, which markdown read as a block of its own.
    const next = lines[unit.end];
    if (unit.kind === 'html' && next !== undefined && next.trim() !== '' && joinText(pieces).trim() !== '') {
      chunks.push({ code: false, text: '\n' });
    }
  }
  return tidy(neutralize(chunks));
}

/** Link destinations are checked in the prose between code, across lines (a definition's URL may be on the next). */
function neutralize(chunks: Chunk[]): Chunk[] {
  const out: Chunk[] = [];
  let run: Chunk[] = [];
  const flush = () => {
    if (run.length === 1) out.push({ code: false, text: neutralizeLinkDestinations(run[0].text) });
    else if (run.length > 1) out.push({ code: false, text: neutralizeLinkDestinations(run.map((chunk) => chunk.text).join('')) });
    run = [];
  };
  for (const chunk of chunks) {
    if (chunk.code) {
      flush();
      out.push(chunk);
    } else {
      run.push(chunk);
    }
  }
  flush();
  return out;
}

/** Trailing spaces and runs of blank lines go, outside code blocks; so do blank lines at the start and the end. */
function tidy(chunks: Chunk[]): string {
  const parts: string[] = [];
  let text: string[] = [];
  const flush = () => {
    if (text.length > 0) parts.push(text.join('').replace(/[ \t]+$/gm, '').replace(/\n{3,}/g, '\n\n'));
    text = [];
  };
  for (const chunk of chunks) {
    if (chunk.block) {
      flush();
      parts.push(chunk.text);
    } else {
      text.push(chunk.text);
    }
  }
  flush();
  const joined = parts.join('').replace(/^(?:[ \t]*\n)+/, '');
  return chunks.at(-1)?.block === true ? joined.replace(/\n+$/, '') : joined.trimEnd();
}

function joinText(pieces: Piece[]): string {
  return pieces.map((piece) => piece.text).join('');
}
