/**
 * Text for agents: snippets as plain text with matches marked «…» (the search service's snippets
 * are HTML-escaped with <mark>), character budgets, and cuts that never split a character.
 */

const ENTITIES: Record<string, string> = { '&amp;': '&', '&lt;': '<', '&gt;': '>', '&quot;': '"', '&#39;': "'" };

/** The service's HTML snippet (escaped text, <mark> around matches, nothing else) as plain text with «…». */
export function plainSnippet(html: string): string {
  return html
    .replace(/<mark>/g, '«')
    .replace(/<\/mark>/g, '»')
    .replace(/&(amp|lt|gt|quot|#39);/g, (e) => ENTITIES[e]);
}

/** Default and bounds of `maxChars`. */
export const BUDGET = { def: 24_000, min: 1_000, max: 60_000 } as const;

/** The first `n` UTF-16 units of `s`, one less when that would split a surrogate pair. */
export function cutChars(s: string, n: number): string {
  if (s.length <= n) return s;
  let end = Math.max(0, n);
  const c = s.charCodeAt(end - 1);
  if (c >= 0xd800 && c <= 0xdbff) end--;
  return s.slice(0, end);
}

/** Up to `n` characters of `s` around position `at` (a quarter before it), cut on character boundaries. */
export function excerptAround(s: string, at: number, n: number): { text: string; cut: boolean } {
  if (s.length <= n) return { text: s, cut: false };
  let start = Math.max(0, Math.min(at - Math.floor(n / 4), s.length - n));
  const c = s.charCodeAt(start);
  if (c >= 0xdc00 && c <= 0xdfff) start++;
  return { text: cutChars(s.slice(start), n), cut: true };
}

/** Byte offsets into UTF-8: true when `b` is a continuation byte (10xxxxxx). */
const isContinuation = (b: number) => (b & 0xc0) === 0x80;

/**
 * The largest end <= `end` that does not split a UTF-8 character of `buf`; when that would leave
 * nothing (a first character longer than `end`), the end of that character instead.
 */
export function utf8End(buf: Buffer, end: number): number {
  if (end >= buf.length) return buf.length;
  let e = end;
  while (e > 0 && isContinuation(buf[e])) e--;
  if (e > 0) return e;
  e = end;
  while (e < buf.length && isContinuation(buf[e])) e++;
  return e;
}
