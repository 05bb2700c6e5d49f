import DOMPurify from 'dompurify';
import MarkdownIt from 'markdown-it';
import { useMemo } from 'preact/hooks';

/**
 * The model's text as markdown, made safe twice over: markdown-it with `html: false` escapes any HTML the model
 * writes (it becomes text) and refuses javascript: and similar links; DOMPurify then keeps only plain formatting
 * elements of what markdown-it produced, so nothing the model writes can run as script or carry a handler.
 */
const markdown = new MarkdownIt({ html: false, linkify: true, breaks: false });

const allowedTags = [
  'p',
  'br',
  'strong',
  'em',
  'code',
  'pre',
  'blockquote',
  'ul',
  'ol',
  'li',
  'a',
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
  'hr',
  'table',
  'thead',
  'tbody',
  'tr',
  'th',
  'td',
  's',
  'del',
];

DOMPurify.addHook('afterSanitizeAttributes', (node) => {
  if (node.tagName === 'A') {
    node.setAttribute('rel', 'noopener noreferrer');
    node.setAttribute('target', '_blank');
  }
});

export function renderMarkdown(text: string): string {
  return DOMPurify.sanitize(markdown.render(text), {
    ALLOWED_TAGS: allowedTags,
    ALLOWED_ATTR: ['href', 'title', 'start', 'align', 'rel', 'target'],
    ALLOW_DATA_ATTR: false,
  });
}

export function Markdown({ text, class: className }: { text: string; class?: string }) {
  const html = useMemo(() => renderMarkdown(text), [text]);
  return <div class={className ? `markdown ${className}` : 'markdown'} dangerouslySetInnerHTML={{ __html: html }} />;
}
