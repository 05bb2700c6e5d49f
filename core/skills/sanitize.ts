/**
 * Skill text is untrusted input (seed 003): keep the markdown, drop HTML. Code (fenced blocks and inline spans) is
 * kept verbatim, since markdown shows it as text; everywhere else comments, script-like elements with their
 * content, and all other tags (keeping their text) are removed, and script URLs in links are neutralized.
 */

const fenceOpen = /^ {0,3}(`{3,}|~{3,})/;
const droppedElements = ['script', 'style', 'iframe', 'object', 'embed', 'template', 'noscript', 'svg', 'math', 'textarea', 'title'];
const droppedElement = new RegExp(`<(${droppedElements.join('|')})\\b[^>]*>[\\s\\S]*?(?:<\\/\\1\\s*>|$)`, 'gi');
const comment = /<!--[\s\S]*?(?:-->|$)/g;
const cdataOrDeclaration = /<!\[CDATA\[[\s\S]*?(?:\]\]>|$)|<![A-Za-z][^>]*>|<\?[\s\S]*?(?:\?>|$)/g;
const tag = /<\/?[A-Za-z][A-Za-z0-9:-]*(?:\s[^<>]*)?\/?>/g;
const scriptUrl = /(\]\(\s*<?)\s*(?:javascript|vbscript|data):(?:[^()\s>]|\([^()\s]*\))*/gi;
const scriptReference = /^( {0,3}\[[^\]\n]+\]:\s*<?)\s*(?:javascript|vbscript|data):\S*/gim;

export function sanitizeMarkdown(text: string): string {
  const normalized = text
    .replace(/^\uFEFF/, '')
    .replace(/\r\n?/g, '\n')
    .replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F]/g, '');
  const cleaned = splitFencedCode(normalized)
    .map((segment) => (segment.code ? segment.text : cleanProse(segment.text)))
    .join('');
  return cleaned.replace(/[ \t]+$/gm, '').replace(/\n{3,}/g, '\n\n').trim();
}

interface Segment {
  code: boolean;
  text: string;
}

/** Splits on fenced code blocks; an unclosed fence runs to the end, as in CommonMark. */
function splitFencedCode(text: string): Segment[] {
  const segments: Segment[] = [];
  const lines = text.split('\n');
  let prose: string[] = [];
  for (let i = 0; i < lines.length; i += 1) {
    const open = fenceOpen.exec(lines[i]);
    if (!open) {
      prose.push(lines[i]);
      continue;
    }
    const fence = open[1];
    const close = new RegExp(`^ {0,3}${fence[0] === '`' ? '`' : '~'}{${fence.length},}[ \\t]*$`);
    let end = i + 1;
    while (end < lines.length && !close.test(lines[end])) end += 1;
    if (prose.length > 0) segments.push({ code: false, text: prose.join('\n') + '\n' });
    prose = [];
    segments.push({ code: true, text: lines.slice(i, end + 1).join('\n') + (end + 1 < lines.length ? '\n' : '') });
    i = end;
  }
  if (prose.length > 0) segments.push({ code: false, text: prose.join('\n') });
  return segments;
}

/** Cleans prose around inline code spans, which stay as written. */
function cleanProse(text: string): string {
  let out = '';
  let plain = '';
  let i = 0;
  while (i < text.length) {
    if (text[i] !== '`') {
      plain += text[i];
      i += 1;
      continue;
    }
    let run = 1;
    while (text[i + run] === '`') run += 1;
    const closing = findClosingRun(text, i + run, run);
    if (closing === -1) {
      plain += text.slice(i, i + run);
      i += run;
      continue;
    }
    out += stripHtml(plain) + text.slice(i, closing + run);
    plain = '';
    i = closing + run;
  }
  return out + stripHtml(plain);
}

/** Index of the next run of exactly `length` backticks before a blank line, or -1. */
function findClosingRun(text: string, from: number, length: number): number {
  for (let i = from; i < text.length; i += 1) {
    if (text[i] === '\n' && /^[ \t]*\n/.test(text.slice(i + 1))) return -1;
    if (text[i] !== '`') continue;
    let run = 1;
    while (text[i + run] === '`') run += 1;
    if (run === length) return i;
    i += run - 1;
  }
  return -1;
}

function stripHtml(text: string): string {
  return text
    .replace(comment, '')
    .replace(droppedElement, '')
    .replace(cdataOrDeclaration, '')
    .replace(tag, '')
    .replace(scriptUrl, '$1#')
    .replace(scriptReference, '$1#');
}
