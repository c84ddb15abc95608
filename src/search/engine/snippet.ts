import crypto from 'node:crypto';

/** At most this many characters (code points) of markdown in a snippet, `…` included. */
const SNIPPET_MAX = 240;

/**
 * Markers Meilisearch puts around matches and at crop ends. They are random per process so that
 * no markdown can forge one; we turn them into <mark> tags only after HTML-escaping the text.
 */
const token = crypto.randomBytes(6).toString('hex');
export const MARKERS = {
  pre: `\u2983m${token}\u2984`,
  post: `\u2983/m${token}\u2984`,
  crop: `\u2983c${token}\u2984`,
} as const;

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
export const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => ESCAPES[c]);

interface Piece {
  /** Its characters (code points): the text itself when it has no surrogate pair, else an array. */
  chars: string | string[];
  marked: boolean;
}

const SURROGATE_RE = /[\uD800-\uDFFF]/;

/**
 * Where a cut at `from` moves to fall between words: just after the first whitespace in
 * [from, limit), or `from` when there is none. `text` is indexed by character (a string, or an
 * array of code points).
 */
export function wordStartFrom(text: ArrayLike<string>, from: number, limit: number): number {
  for (let i = from; i < limit; i++) if (/\s/.test(text[i])) return i + 1;
  return from;
}

/** Where a cut at `to` moves to fall between words: at the last whitespace in (limit, to], or `to` when there is none. */
export function wordEndAt(text: ArrayLike<string>, to: number, limit: number): number {
  for (let i = to; i > limit; i--) if (/\s/.test(text[i])) return i;
  return to;
}

/**
 * Turns Meilisearch's cropped, highlighted text (with MARKERS) into the snippet: a literal excerpt
 * of at most `max` characters around the first match, HTML-escaped, matches in <mark>…</mark>,
 * `…` where the excerpt was cut. Nothing else is markup.
 */
export function buildSnippet(formatted: string, max = SNIPPET_MAX): string {
  let text = formatted;
  let cutStart = false;
  let cutEnd = false;
  if (text.startsWith(MARKERS.crop)) {
    cutStart = true;
    text = text.slice(MARKERS.crop.length);
  }
  if (text.endsWith(MARKERS.crop)) {
    cutEnd = true;
    text = text.slice(0, -MARKERS.crop.length);
  }
  text = text.split(MARKERS.crop).join('');
  // Without surrogate pairs (most text), a UTF-16 unit is a code point: the strings serve as they are.
  const bmp = !SURROGATE_RE.test(text);
  const charsOf = (s: string) => (bmp ? s : Array.from(s));

  // Split into marked and unmarked pieces.
  const pieces: Piece[] = [];
  let rest = text;
  while (rest.length) {
    const open = rest.indexOf(MARKERS.pre);
    if (open === -1) {
      pieces.push({ chars: charsOf(rest), marked: false });
      break;
    }
    if (open > 0) pieces.push({ chars: charsOf(rest.slice(0, open)), marked: false });
    const afterOpen = rest.slice(open + MARKERS.pre.length);
    let close = afterOpen.indexOf(MARKERS.post);
    if (close === -1) close = afterOpen.length;
    pieces.push({ chars: charsOf(afterOpen.slice(0, close)), marked: true });
    rest = afterOpen.slice(close + MARKERS.post.length);
  }

  const total = pieces.reduce((n, p) => n + p.chars.length, 0);
  let from = 0;
  let to = total;
  const budget = () => max - (cutStart || from > 0 ? 1 : 0) - (cutEnd || to < total ? 1 : 0);
  if (total > max - (cutStart ? 1 : 0) - (cutEnd ? 1 : 0)) {
    // Window around the first match, with some context before it.
    let firstMark = 0;
    for (let i = 0, pos = 0; i < pieces.length; pos += pieces[i].chars.length, i++) {
      if (pieces[i].marked) {
        firstMark = pos;
        break;
      }
    }
    const flat = bmp ? pieces.map((p) => p.chars as string).join('') : pieces.flatMap((p) => p.chars);
    from = Math.max(0, firstMark - Math.floor(max / 3));
    // Start and end at a word boundary when one is near.
    if (from > 0) from = wordStartFrom(flat, from, Math.min(firstMark, from + 20));
    to = Math.min(total, from + max - 2);
    while (to - from > budget()) to--;
    if (to < total) to = wordEndAt(flat, to, Math.max(from, to - 20));
  }

  let out = cutStart || from > 0 ? '…' : '';
  for (let i = 0, pos = 0; i < pieces.length; pos += pieces[i].chars.length, i++) {
    const p = pieces[i];
    const a = Math.max(from, pos);
    const b = Math.min(to, pos + p.chars.length);
    if (a >= b) continue;
    const s = escapeHtml(typeof p.chars === 'string' ? p.chars.slice(a - pos, b - pos) : p.chars.slice(a - pos, b - pos).join(''));
    out += p.marked ? `<mark>${s}</mark>` : s;
  }
  if (cutEnd || to < total) out += '…';
  return out;
}
