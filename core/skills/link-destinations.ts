/**
 * Link destinations in skill text: a link (`](url)`), a reference definition (`]: url`) or an autolink (`<url>`) may
 * point only at http(s), mailto or tel URLs, or at a relative path. Anything else (`javascript:`, `data:`,
 * `vbscript:`, however it is spelled with entities, escapes or control characters) becomes `#`.
 */

const allowedSchemes = new Set(['http', 'https', 'mailto', 'tel']);
/** How far into a destination its scheme is looked for. */
const schemeLookahead = 256;

const namedEntities: Record<string, string> = { colon: ':', tab: '\t', newline: '\n', lt: '<' };

/** Whether a URL, read as a browser would (entities decoded, tabs, newlines and controls dropped), may be linked. */
export function isAllowedUrl(url: string, from = 0): boolean {
  let scheme = '';
  let opened = false;
  const end = Math.min(url.length, from + schemeLookahead);
  for (let i = from; i < end;) {
    let ch = url[i];
    let width = 1;
    // Whitespace written out ends a markdown destination; written as an entity, browsers drop it from the URL.
    if (ch === ' ' || ch === '\t' || ch === '\n') return true;
    if (ch === '&') {
      const entity = decodeEntity(url, i);
      if (!entity) return true;
      [ch, width] = entity;
    } else if (ch === '\\') {
      i += 1;
      continue;
    }
    i += width;
    if ((ch <= ' ' && ch !== ' ') || ch === '\u007f') continue;
    if (ch === '<' && scheme === '' && !opened) {
      opened = true;
      continue;
    }
    if (ch === ':') return scheme === '' || allowedSchemes.has(scheme.toLowerCase());
    if (/[A-Za-z]/.test(ch) || (scheme !== '' && /[0-9+.-]/.test(ch))) {
      scheme += ch;
      continue;
    }
    return true;
  }
  // Out of text: no scheme, a relative URL. Out of lookahead: a scheme too long to read is not trusted.
  return end === url.length || scheme === '';
}

function decodeEntity(text: string, at: number): [string, number] | null {
  const match = /^&(?:#(\d{1,7})|#[xX]([0-9A-Fa-f]{1,6})|([A-Za-z][A-Za-z0-9]{1,31}));?/.exec(text.slice(at, at + 40));
  if (!match) return null;
  if (match[3] !== undefined) {
    const named = namedEntities[match[3].toLowerCase()];
    return named === undefined ? null : [named, match[0].length];
  }
  const code = match[1] !== undefined ? Number(match[1]) : parseInt(match[2], 16);
  return [code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : '\uFFFD', match[0].length];
}

/** Prose with every link or definition destination that is not allowed replaced by `#`. Linear in the text. */
export function neutralizeLinkDestinations(prose: string): string {
  if (!prose.includes(']')) return prose;
  const opener = /\]\(|\]:/g;
  let out = '';
  let copied = 0;
  for (let match = opener.exec(prose); match; match = opener.exec(prose)) {
    const start = skipSpace(prose, match.index + 2);
    if (isAllowedUrl(prose, start)) continue;
    const end = destinationEnd(prose, start);
    out += `${prose.slice(copied, start)}#`;
    copied = end;
    opener.lastIndex = Math.max(end, opener.lastIndex);
  }
  return copied === 0 ? prose : out + prose.slice(copied);
}

/** Spaces and tabs, with at most one line ending among them (as CommonMark allows before a destination). */
function skipSpace(text: string, from: number): number {
  let i = from;
  while (text[i] === ' ' || text[i] === '\t') i += 1;
  if (text[i] === '\n') {
    i += 1;
    while (text[i] === ' ' || text[i] === '\t') i += 1;
  }
  return i;
}

/**
 * Where a destination starting at `start` ends: `<...>` to its `>`, otherwise at whitespace or an unbalanced `)`.
 * Never past a backtick (or the backslash before one), so removing a destination cannot change what is code.
 */
function destinationEnd(text: string, start: number): number {
  let i = start;
  const pointy = text[i] === '<' || (text[i] === '\\' && text[i + 1] === '<');
  let depth = 0;
  while (i < text.length) {
    const ch = text[i];
    if (ch === '`' || (ch === '\\' && text[i + 1] === '`')) return i;
    if (pointy) {
      if (ch === '\n') return i;
      if (ch === '>') return i + 1;
    } else {
      if (ch === ' ' || ch === '\t' || ch === '\n') return i;
      if (ch === '(') depth += 1;
      if (ch === ')') {
        if (depth === 0) return i;
        depth -= 1;
      }
    }
    i += ch === '\\' && i + 1 < text.length && text[i + 1] !== '\n' ? 2 : 1;
  }
  return i;
}
