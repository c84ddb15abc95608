/*
 * A search snippet as text to read. The server sends a fragment of the session's markdown,
 * HTML-escaped, with each match wrapped in <mark>…</mark>. People should read it as text: the
 * markdown syntax (`_**User**_`, `---`, `#` headings, `**`, links, fences, HTML comments) is
 * removed, the matches stay marked and code stays code. The result is a list of segments that the
 * page renders as React text (never as HTML), so hostile content stays text.
 */

export interface SnippetSegment {
  text: string;
  mark: boolean;
  code: boolean;
}

// Private-use markers for where a match or a piece of code starts and ends while the syntax is
// stripped; any such character in the content itself is dropped first.
const MARK_ON = '\uE000';
const MARK_OFF = '\uE001';
const CODE_ON = '\uE002';
const CODE_OFF = '\uE003';
const MARKERS = /[\uE000-\uE003]/g;
const M = '[\\uE000\\uE001]*'; // match markers that may stand before line syntax

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

/** HTML-escaped text → the text it stands for (entities only; the input holds no other markup). */
export function unescapeHtml(s: string): string {
  return s.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, e: string) => {
    if (e[0] === '#') {
      const code = e[1] === 'x' || e[1] === 'X' ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10);
      return Number.isFinite(code) && code >= 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
    }
    return ENTITIES[e.toLowerCase()] ?? whole;
  });
}

/** Emphasis, links and images of prose (not code) → their text. */
function stripInline(s: string): string {
  let out = s
    .replace(/!\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/\[([^\]]+)\]\((?:[^()\s]|\([^()\s]*\))*\)/g, '$1')
    .replace(/<\/?(details|summary|br|hr|p|div|span|sup|sub|kbd|b|i|em|strong)\b[^>]*>/gi, ' ');
  for (let i = 0; i < 3; i++) {
    out = out
      .replace(/(\*\*|__)(?=\S)(.+?)(?<=\S)\1/g, '$2')
      .replace(/\*(?=[^\s*])(.+?)(?<=[^\s*])\*/g, '$1')
      .replace(/(^|[^\p{L}\p{N}_])_(?=[^\s_])(.+?)(?<=[^\s_])_(?![\p{L}\p{N}_])/gu, '$1$2');
  }
  // What a cut left unpaired: `**`, `_**`, `**_`, `~~`.
  return out.replace(/_?\*{2,}_?|~~/g, '');
}

/** One line of prose: line syntax off, code spans kept as code, the rest stripped. */
function proseLine(line: string): string {
  const bare = line.replace(MARKERS, '');
  if (/^\s*([-*_]\s*){3,}$/.test(bare) || /^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$/.test(bare)) {
    return line.replace(/[^\uE000\uE001]/g, ''); // a rule or a table's separator row
  }
  const stripped = line
    .replace(new RegExp(`^(${M})\\s{0,3}#{1,6}\\s+`), '$1')
    .replace(new RegExp(`^(${M})\\s*(>\\s?)+`), '$1')
    .replace(new RegExp(`^(${M})\\s*([-*+]|\\d{1,9}[.)])\\s+(\\[[ xX]\\]\\s+)?`), '$1');
  return stripped
    .split(/(`+)([^`]*?)\1/)
    .map((part, i) => (i % 3 === 2 ? CODE_ON + part + CODE_OFF : i % 3 === 1 ? '' : stripInline(part)))
    .join('');
}

const FENCE_RE = /^\s*(`{3,}|~{3,})/;
/** A fence with an info string (```ts): only an opening fence has one. */
const OPENING_FENCE_RE = /^\s*(`{3,}|~{3,})\s*[^\s`~]/;
/** A transcript's own lines between turns (a rule, `_**User**_`, `_**Agent …**_`): prose, never code. */
const TURN_RE = /^\s*(-{3,}\s*$|_\*\*(User|Agent|Assistant)\b)/;

/**
 * Whether an excerpt cut at its start begins inside fenced code. The server cuts wherever the
 * match is, so a snippet may start in a code block and show only its closing fence: read from
 * the top, that fence would open a block and turn the prose after it into code. What tells: a
 * first fence with an info string opens; a transcript's turn line is prose, so one before the
 * first fence means that fence opens and one after it (before the next) means it closes; else,
 * with nothing cut at the end, the fences must close, so an odd number of them means the excerpt
 * began in code. With no sign either way it begins in prose.
 */
function startsInCode(lines: string[], cutAfter: boolean): boolean {
  const bare = lines.map((l) => l.replace(MARKERS, ''));
  const fences = bare.flatMap((l, i) => (FENCE_RE.test(l) ? [i] : []));
  if (fences.length === 0 || OPENING_FENCE_RE.test(bare[fences[0]])) return false;
  if (bare.slice(0, fences[0]).some((l) => TURN_RE.test(l))) return false;
  if (bare.slice(fences[0] + 1, fences[1] ?? bare.length).some((l) => TURN_RE.test(l))) return true;
  return !cutAfter && fences.length % 2 === 1;
}

/** The snippet's markdown with the match markers → text with code and match markers. */
function toText(marked: string, cutBefore: boolean, cutAfter: boolean): string {
  const lines = marked.replace(/<!--[\s\S]*?(-->|$)/g, ' ').split('\n');
  let fenced = cutBefore && startsInCode(lines, cutAfter);
  return lines
    .map((line, i) => {
      if (FENCE_RE.test(line.replace(MARKERS, ''))) {
        fenced = !fenced;
        return line.replace(/[^\uE000\uE001]/g, '');
      }
      if (fenced) return CODE_ON + line + CODE_OFF;
      // A code span the cut went through: its other backtick is outside the excerpt.
      let prose = line;
      if (i === 0 && cutBefore && oddTicks(prose)) prose = `\`${prose}`;
      if (i === lines.length - 1 && cutAfter && oddTicks(prose)) prose = `${prose}\``;
      return proseLine(prose);
    })
    .join('\n');
}

/** Whether a line has an odd number of lone backticks (one of its code spans is cut). */
const oddTicks = (line: string) => (line.replace(MARKERS, '').match(/(?<!`)`(?!`)/g)?.length ?? 0) % 2 === 1;

/** A snippet (escaped text with <mark>…</mark>) → segments of plain text, marked or not, code or not. */
export function snippetSegments(html: string): SnippetSegment[] {
  let marked = '';
  let open = false;
  for (const piece of html.split(/(<mark>|<\/mark>)/)) {
    if (piece === '<mark>' || piece === '</mark>') {
      if (open !== (piece === '<mark>')) marked += open ? MARK_OFF : MARK_ON;
      open = piece === '<mark>';
    } else marked += unescapeHtml(piece).replace(MARKERS, '');
  }
  // The server marks a cut with `…`; it goes back on once the syntax behind it is gone.
  const cutBefore = marked.startsWith('…');
  const cutAfter = marked.length > 1 && marked.endsWith('…');
  marked = marked.slice(cutBefore ? 1 : 0, cutAfter ? -1 : undefined);
  const segments: SnippetSegment[] = [];
  let mark = false;
  let code = false;
  for (const piece of toText(marked, cutBefore, cutAfter).split(/([\uE000-\uE003])/)) {
    if (piece === MARK_ON || piece === MARK_OFF) mark = piece === MARK_ON;
    else if (piece === CODE_ON || piece === CODE_OFF) code = piece === CODE_ON;
    else {
      const text = piece.replace(/\s+/g, ' ');
      if (!text) continue;
      const last = segments[segments.length - 1];
      if (last && last.mark === mark && last.code === code) last.text += text;
      else segments.push({ text, mark, code });
    }
  }
  // Whitespace at the edges, and runs of it where segments meet, read as one space.
  if (segments.length) {
    segments[0].text = segments[0].text.trimStart();
    segments[segments.length - 1].text = segments[segments.length - 1].text.trimEnd();
  }
  for (let i = 1; i < segments.length; i++) {
    if (segments[i - 1].text.endsWith(' ') && segments[i].text.startsWith(' ')) segments[i].text = segments[i].text.slice(1);
  }
  const kept = segments.filter((s) => s.text);
  if (cutBefore) kept.unshift({ text: '…', mark: false, code: false });
  if (cutAfter) kept.push({ text: '…', mark: false, code: false });
  return kept;
}

/** A snippet's words as read (syntax, marks and cuts off), lower-cased. */
function wordsOf(html: string): string[] {
  const text = snippetSegments(html)
    .map((s) => s.text)
    .join('');
  return text.toLowerCase().match(/[\p{L}\p{N}_]+/gu) ?? [];
}

/** Runs of this many words an excerpt shares with the snippet above it count as repeated. */
const SHARED_RUN = 4;

/**
 * Whether `excerpt` mostly repeats `shown` (both snippets as the server sends them): at least
 * half of the excerpt's words stand in runs of SHARED_RUN words or more that `shown` also holds.
 * A short session's one matching exchange is often the very text of the result's snippet; the
 * page then shows the exchange's link without its excerpt.
 */
export function repeats(shown: string, excerpt: string): boolean {
  const seen = wordsOf(shown);
  const words = wordsOf(excerpt);
  if (words.length === 0) return true;
  const runs = new Set<string>();
  for (let i = 0; i + SHARED_RUN <= seen.length; i++) runs.add(seen.slice(i, i + SHARED_RUN).join(' '));
  const covered = new Array<boolean>(words.length).fill(false);
  for (let i = 0; i + SHARED_RUN <= words.length; i++) {
    if (runs.has(words.slice(i, i + SHARED_RUN).join(' '))) covered.fill(true, i, i + SHARED_RUN);
  }
  return covered.filter(Boolean).length * 2 >= words.length;
}
