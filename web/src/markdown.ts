import DOMPurify from 'dompurify';
import { Marked, type Tokens } from 'marked';

/*
 * Uploaded markdown is hostile. Only markdown syntax renders: raw HTML in it is
 * shown as text, as in a code block (marked's `html` tokens are escaped), so no hostile markup is
 * ever handed to an HTML parser — not even an inert one, where Chromium still checks (and
 * reports) inline handlers, inline styles and <base> against the page's CSP. marked's output then
 * goes through DOMPurify with an allow-list of plain text-formatting elements before the page
 * sees it:
 * - no script, style, iframe, form, object, svg, math, img, media, or any other element not
 *   listed below (their text is kept, their markup is not);
 * - no attribute but `href`, `title`, `start`, `align`, `colspan`, `rowspan`, `open`: no event
 *   handlers, no inline style (CSS url()), no class or id (no clobbering, no mimicking the UI);
 * - links only to http(s) and mailto (anything else loses its href and is plain text), opened
 *   in a new tab without referrer or opener;
 * - images are never loaded: markdown images become links to their address, raw <img> becomes
 *   its alt text or address in brackets. So the page never requests anything from another origin.
 * Headings are moved down two levels: the page's h1 is the session's title, h2 the exchanges.
 */

const ALLOWED_TAGS = [
  'p',
  'br',
  'hr',
  'h3',
  'h4',
  'h5',
  'h6',
  'strong',
  'b',
  'em',
  'i',
  'del',
  's',
  'code',
  'pre',
  'blockquote',
  'ul',
  'ol',
  'li',
  'a',
  'table',
  'thead',
  'tbody',
  'tr',
  'th',
  'td',
  'details',
  'summary',
  'kbd',
  'sup',
  'sub',
];
const ALLOWED_ATTR = ['href', 'title', 'start', 'align', 'colspan', 'rowspan', 'open'];
const SAFE_URL = /^(?:https?:|mailto:)/i;

const escapeHtml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

const marked = new Marked({
  gfm: true,
  breaks: false,
  async: false,
  renderer: {
    heading({ tokens, depth }: Tokens.Heading) {
      const level = Math.min(6, depth + 2);
      return `<h${level}>${this.parser.parseInline(tokens)}</h${level}>\n`;
    },
    html({ text }: Tokens.HTML | Tokens.Tag) {
      return escapeHtml(text);
    },
    link({ href, title, tokens }: Tokens.Link) {
      // An image inside a link is its label (no link in a link); an empty label is the address.
      let inner = tokens
        .map((t) => (t.type === 'image' ? escapeHtml(`Image: ${(t as Tokens.Image).text || (t as Tokens.Image).href}`) : this.parser.parseInline([t])))
        .join('');
      if (!inner.replace(/<[^>]*>/g, '').trim()) inner = escapeHtml(href ?? 'link');
      return `<a href="${escapeHtml(href ?? '')}"${title ? ` title="${escapeHtml(title)}"` : ''}>${inner}</a>`;
    },
    image({ href, text }: Tokens.Image) {
      return `<a href="${escapeHtml(href ?? '')}">${escapeHtml(`Image: ${text || href || ''}`)}</a>`;
    },
  },
});

let purify: ReturnType<typeof DOMPurify> | null = null;

function sanitizer(): ReturnType<typeof DOMPurify> {
  if (purify) return purify;
  const p = DOMPurify(window);
  p.addHook('uponSanitizeElement', (node, data) => {
    // A raw <img> is never loaded (DOMPurify parses inertly): it is replaced by its text.
    if (data.tagName === 'img' && node instanceof Element && node.parentNode) {
      const label = node.getAttribute('alt') || node.getAttribute('src') || 'image';
      node.parentNode.insertBefore(node.ownerDocument.createTextNode(`[image: ${label}]`), node);
    }
  });
  p.addHook('afterSanitizeAttributes', (node) => {
    if (node.nodeName !== 'A') return;
    const href = node.getAttribute('href');
    if (href && SAFE_URL.test(href.trim())) {
      node.setAttribute('target', '_blank');
      node.setAttribute('rel', 'noopener noreferrer nofollow');
    } else {
      node.removeAttribute('href');
    }
  });
  purify = p;
  return p;
}

/** Untrusted markdown → HTML that is safe to insert into the console's page. */
export function renderMarkdown(markdown: string): string {
  const html = marked.parse(markdown) as string;
  return sanitizer().sanitize(html, {
    ALLOWED_TAGS,
    ALLOWED_ATTR,
    ALLOWED_URI_REGEXP: SAFE_URL,
    ALLOW_DATA_ATTR: false,
    ALLOW_ARIA_ATTR: false,
    KEEP_CONTENT: true,
    RETURN_TRUSTED_TYPE: false,
  });
}
