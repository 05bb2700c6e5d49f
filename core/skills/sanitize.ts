import { sanitizeUnit } from './inline-html';
import { markdownUnits } from './markdown-blocks';
import { SanitizedOutput } from './sanitized-output';

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
  const flat = new SanitizedOutput();
  sanitizeUnit(normalized, 'flat', flat);
  return flat.finish();
}

function sanitizeBlocks(text: string): string {
  const lines = text.split('\n');
  const out = new SanitizedOutput();
  let first = true;
  for (const unit of markdownUnits(text)) {
    if (!first) out.prose('\n');
    first = false;
    const source = unit.end - unit.start === 1 ? lines[unit.start] : lines.slice(unit.start, unit.end).join('\n');
    if (unit.kind === 'code') {
      out.block(source);
      continue;
    }
    out.mark();
    sanitizeUnit(source, unit.kind === 'html' ? 'html' : 'prose', out);
    // What is left of an HTML block must not run into the next line, which markdown read as a block of its own.
    const next = lines[unit.end];
    if (unit.kind === 'html' && next !== undefined && next.trim() !== '' && !out.isBlankSinceMark()) out.prose('\n');
  }
  return out.finish();
}
