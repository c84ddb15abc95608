/**
 * Highlighting of a session indexed whole, done here rather than by the engine: asking Meilisearch
 * to crop or highlight a document of up to 64 KB makes it re-tokenise the whole text at query time
 * (~20 ms per page of 10 here, against ~7 ms for the search itself), while the plain stored text
 * comes back at almost no cost. The engine still decides which sessions match and how they rank;
 * this only decides which words of the text to mark, following the same rules: case and accents
 * ignored, one typo from 5 letters and two from 9 (not on the first letter), the last word also
 * as a prefix, "quoted phrases" as consecutive words, and the other forms of the query's words
 * (word-forms.ts: a word whose stem, or an identifier with a part whose stem, is one the forms
 * query asked for).
 */
import { exchangeNumberAt, type Outline } from '../../domain/document-outline';
import { WORD_RE } from '../../domain/search-documents';
import { identifierParts, stemOf } from '../../domain/word-forms';
import { MARKERS, wordEndAt, wordStartFrom } from './snippet';
import type { QueryPlan } from './query-plan';

/** Characters of markdown kept around the best match before buildSnippet trims to 240. */
const WINDOW_BEFORE = 90;
const WINDOW_AFTER = 260;
/** How far a window's ends move to fall between words. */
const WORD_SNAP = 24;

const ASCII_RE = /^[\x00-\x7f]*$/;
/** Lower case without accents; ASCII (most words of a transcript) skips Unicode normalisation. */
const normalize = (w: string) => (ASCII_RE.test(w) ? w.toLowerCase() : w.normalize('NFD').replace(/\p{M}/gu, '').toLowerCase());

interface QueryTerms {
  /** Loose words (with typo tolerance); the last one of the query also matches as a prefix. */
  words: Array<{ text: string; prefix: boolean }>;
  /** Quoted phrases, as normalized words. */
  phrases: string[][];
  /** The stems the forms query asked for (empty: forms are not marked). */
  forms: Set<string>;
}

const wordsOf = (s: string) => (s.match(WORD_RE) ?? []).map(normalize);

export function parseQuery(query: string, forms: readonly string[] = []): QueryTerms {
  const phrases: string[][] = [];
  const loose: string[] = [];
  const parts = query.split('"');
  parts.forEach((part, i) => {
    // Odd parts are inside quotes (an unclosed quote runs to the end, as the engine reads it).
    if (i % 2 === 1) {
      const ws = wordsOf(part);
      if (ws.length > 0) phrases.push(ws);
    } else loose.push(...wordsOf(part));
  });
  const lastIsLoose = parts.length % 2 === 1 && wordsOf(parts[parts.length - 1]).length > 0;
  const words = loose.map((text, i) => ({ text, prefix: lastIsLoose && i === loose.length - 1 }));
  return { words, phrases, forms: new Set(forms) };
}

/** What a search marks for its plan: the words and phrases as asked, and the stems its forms queries asked for. */
export const termsOfPlan = (plan: QueryPlan): QueryTerms => parseQuery(plan.q, [...new Set(plan.forms?.flat() ?? [])]);

/** Whether a token (as written: its case tells an identifier's parts) is a form of one the query asked for. */
function isForm(token: string, norm: string, forms: Set<string>): boolean {
  if (forms.size === 0) return false;
  if (forms.has(stemOf(norm))) return true;
  return identifierParts(token).some((p) => forms.has(stemOf(p)));
}

const typosAllowed = (len: number) => (len >= 9 ? 2 : len >= 5 ? 1 : 0);

/** Rows of boundedDistance's table, kept between calls (the marking of a page calls it often). */
let rows = [new Int32Array(16), new Int32Array(16), new Int32Array(16)];

/** Character counts of bagDistance, by character code modulo 128; all zero between calls. */
const bag = new Int32Array(128);

/**
 * A lower bound of the edit distance of a and b: how many more characters one has than the other,
 * counted as multisets (a substitution, insertion or deletion changes each side's excess by at
 * most one, a swap of neighbours by none). Characters are counted by code modulo 128: characters
 * sharing a count can only lower the bound.
 */
function bagDistance(a: string, b: string): number {
  for (let i = 0; i < a.length; i++) bag[a.charCodeAt(i) & 127]++;
  for (let i = 0; i < b.length; i++) bag[b.charCodeAt(i) & 127]--;
  let more = 0;
  let fewer = 0;
  // Each count read once (then zeroed), through the characters of both words.
  for (let i = 0; i < a.length + b.length; i++) {
    const k = (i < a.length ? a.charCodeAt(i) : b.charCodeAt(i - a.length)) & 127;
    const v = bag[k];
    if (v > 0) more += v;
    else fewer -= v;
    bag[k] = 0;
  }
  return Math.max(more, fewer);
}

/** Edit distance (with transpositions) of a and b if it is at most `max`, else a number over `max`. */
export function boundedDistance(a: string, b: string, max: number): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  // Most words compared are far apart, which their letters alone tell, without the table.
  if (bagDistance(a, b) > max) return max + 1;
  const n = b.length;
  if (rows[0].length <= n) rows = rows.map(() => new Int32Array(2 * (n + 1)));
  let [prev2, prev, cur] = rows;
  for (let j = 0; j <= n; j++) prev[j] = j;
  for (let i = 1; i <= a.length; i++) {
    cur[0] = i;
    let rowMin = i;
    for (let j = 1; j <= n; j++) {
      const cost = a.charCodeAt(i - 1) === b.charCodeAt(j - 1) ? 0 : 1;
      let v = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost);
      if (i > 1 && j > 1 && a.charCodeAt(i - 1) === b.charCodeAt(j - 2) && a.charCodeAt(i - 2) === b.charCodeAt(j - 1)) v = Math.min(v, prev2[j - 2] + 1);
      cur[j] = v;
      if (v < rowMin) rowMin = v;
    }
    if (rowMin > max) return max + 1;
    const free = prev2;
    prev2 = prev;
    prev = cur;
    cur = free;
  }
  return prev[n];
}

/**
 * Whether a and b are at most one edit apart (one substitution, insertion, deletion or swap of
 * neighbours): `boundedDistance(a, b, 1) <= 1`, in one pass without a table (most query words
 * allow one typo, and a page's text has hundreds of candidate words for each).
 */
export function withinOneEdit(a: string, b: string): boolean {
  const la = a.length;
  const lb = b.length;
  if (la === lb) {
    let i = 0;
    while (i < la && a.charCodeAt(i) === b.charCodeAt(i)) i++;
    if (i >= la - 1) return true;
    // A substitution at i, or neighbours swapped at i and i + 1; the rest must be equal.
    const swapped = a.charCodeAt(i) === b.charCodeAt(i + 1) && a.charCodeAt(i + 1) === b.charCodeAt(i);
    return (swapped && a.slice(i + 2) === b.slice(i + 2)) || a.slice(i + 1) === b.slice(i + 1);
  }
  if (Math.abs(la - lb) !== 1) return false;
  const [long, short] = la > lb ? [a, b] : [b, a];
  let i = 0;
  while (i < short.length && long.charCodeAt(i) === short.charCodeAt(i)) i++;
  // One character of the longer word left out at i.
  return long.slice(i + 1) === short.slice(i);
}

const withinTypos = (a: string, b: string, max: number) => (max === 1 ? withinOneEdit(a, b) : boundedDistance(a, b, max) <= max);

function wordMatches(token: string, term: { text: string; prefix: boolean }): boolean {
  const q = term.text;
  if (token === q || (term.prefix && token.startsWith(q))) return true;
  const max = typosAllowed(q.length);
  if (max === 0 || token[0] !== q[0]) return false;
  if (withinTypos(q, token, max)) return true;
  return term.prefix && token.length > q.length && withinTypos(q, token.slice(0, q.length), max);
}

/** The words of ASCII text: WORD_RE restricted to ASCII is exactly this, and much faster. */
const ASCII_WORD_RE = /[A-Za-z0-9]+/g;
/**
 * Whether `text` is ASCII only: its UTF-8 length is its length exactly then (any other character
 * takes two bytes or more). Node counts UTF-8 bytes with vector instructions, several times
 * faster than a regular expression looking for a character over 0x7f.
 */
const isAscii = (text: string) => Buffer.byteLength(text, 'utf8') === text.length;

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * A pattern finding, in ASCII text, every whole word that wordMatches could accept for one of
 * `words` (and a few it rejects): the same first letter, a length within the typos allowed, or
 * the word itself when no typo is. Null when no ASCII word can match.
 */
function candidatePattern(words: QueryTerms['words'], forms: Set<string>): RegExp | null {
  // A form's words begin with the stem but (mostly) its last letter (`retri`: `retry`,
  // `retrying`), an identifier holds it anywhere (`autoRetryCount`).
  const ofForms = [...forms].filter((f) => ASCII_RE.test(f)).map((f) => `[A-Za-z0-9]*${escapeRe(f.length > 3 ? f.slice(0, -1) : f)}[A-Za-z0-9]*`);
  const alternatives = words.flatMap(({ text, prefix }) => {
    if (!ASCII_RE.test(text)) return [];
    const max = typosAllowed(text.length);
    if (max === 0) return [escapeRe(text) + (prefix ? '[a-z0-9]*' : '')];
    const min = text.length - max - 1;
    return [`${escapeRe(text[0])}[a-z0-9]{${min},${prefix ? '' : text.length + max - 1}}`];
  });
  alternatives.push(...ofForms);
  return alternatives.length ? new RegExp(`(?<![A-Za-z0-9])(?:${alternatives.join('|')})(?![A-Za-z0-9])`, 'gi') : null;
}

/**
 * Each distinct word's verdict for parsed query terms, shared by every text marked with the same
 * terms object (a page's hits repeat most of their words).
 */
const verdictsByTerms = new WeakMap<QueryTerms, Map<string, boolean>>();

/** How many different query words (or phrase words) `text` holds. */
export function distinctMatches(text: string, terms: QueryTerms): number {
  return new Set(matchRanges(text, terms).map(([a, b]) => text.slice(a, b).toLowerCase())).size;
}

/** A query word, with the stems of its forms query (empty: none). */
export interface HeldWord {
  text: string;
  /** The last word typed: it also matches as a prefix. */
  prefix: boolean;
  forms: Set<string>;
}

/**
 * Which of `words` the marked ranges of `text` (matchRanges') hold: a word is held when a marked
 * token matches it as the engine would (typos, a prefix) or is one of its forms.
 */
export function wordsHeld(text: string, ranges: Array<[number, number]>, words: HeldWord[]): boolean[] {
  const held = words.map(() => false);
  const seen = new Set<string>();
  for (const [a, b] of ranges) {
    const token = text.slice(a, b);
    if (seen.has(token)) continue;
    seen.add(token);
    const norm = normalize(token);
    words.forEach((w, i) => {
      if (!held[i] && (wordMatches(norm, w) || isForm(token, norm, w.forms))) held[i] = true;
    });
  }
  return held;
}

/** The ranges (UTF-16 offsets) of `text` to mark for `query`, in order. */
export function matchRanges(text: string, query: string | QueryTerms): Array<[number, number]> {
  const terms = typeof query === 'string' ? parseQuery(query) : query;
  const ascii = isAscii(text);
  const re = ascii ? ASCII_WORD_RE : WORD_RE;
  // A transcript repeats its words: decide each distinct word once.
  const verdicts = verdictsByTerms.get(terms) ?? new Map<string, boolean>();
  verdictsByTerms.set(terms, verdicts);
  // Keyed by the token as written: its case tells an identifier's parts.
  const matches = (token: string, norm: string) => {
    let v = verdicts.get(token);
    if (v === undefined) {
      v = terms.words.some((w) => wordMatches(norm, w)) || isForm(token, norm, terms.forms);
      verdicts.set(token, v);
    }
    return v;
  };
  const out: Array<[number, number]> = [];
  if (ascii && terms.phrases.length === 0) {
    // Only tokens that could match are looked at: the pattern finds them natively.
    const candidates = candidatePattern(terms.words, terms.forms);
    if (!candidates) return out;
    for (let m = candidates.exec(text); m; m = candidates.exec(text)) {
      if (matches(m[0], m[0].toLowerCase())) out.push([m.index, m.index + m[0].length]);
    }
    return out;
  }
  // Phrases need every word in order; loose words only the matching ones.
  const tokens: Array<{ start: number; end: number; token: string; norm: string }> = [];
  const keepAll = terms.phrases.length > 0;
  re.lastIndex = 0;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    const norm = ascii ? m[0].toLowerCase() : normalize(m[0]);
    if (keepAll) tokens.push({ start: m.index, end: m.index + m[0].length, token: m[0], norm });
    else if (matches(m[0], norm)) out.push([m.index, m.index + m[0].length]);
  }
  if (!keepAll) return out;
  const marked = tokens.map((t) => matches(t.token, t.norm));
  for (const phrase of terms.phrases) {
    for (let i = 0; i + phrase.length <= tokens.length; i++) {
      if (phrase.every((w, k) => tokens[i + k].norm === w)) for (let k = 0; k < phrase.length; k++) marked[i + k] = true;
    }
  }
  for (let i = 0; i < tokens.length; i++) if (marked[i]) out.push([tokens[i].start, tokens[i].end]);
  return out;
}

/** `text` with MARKERS around the given ranges. */
function withMarkers(text: string, ranges: Array<[number, number]>, from = 0, to = text.length): string {
  let out = '';
  let pos = from;
  for (const [a, b] of ranges) {
    if (b <= from || a >= to) continue;
    const s = Math.max(a, from);
    const e = Math.min(b, to);
    out += text.slice(pos, s) + MARKERS.pre + text.slice(s, e) + MARKERS.post;
    pos = e;
  }
  return out + text.slice(pos, to);
}

/** Start of the window holding the most distinct matched words (ties: the earliest). */
function bestWindowStart(text: string, ranges: Array<[number, number]>): number {
  let best = 0;
  let bestScore = -1;
  const words = ranges.map(([a, b]) => normalize(text.slice(a, b)));
  for (let i = 0; i < ranges.length; i++) {
    const start = ranges[i][0];
    const seen = new Set<string>();
    for (let j = i; j < ranges.length && ranges[j][1] <= start + WINDOW_AFTER; j++) seen.add(words[j]);
    if (seen.size > bestScore) {
      bestScore = seen.size;
      best = start;
    }
  }
  return best;
}

/**
 * The excerpt of `text` for buildSnippet: MARKERS around matches, crop markers where cut, a window
 * around the part with the most distinct matched words (the start of the text when none matched).
 */
export function snippetSource(text: string, ranges: Array<[number, number]>): string {
  const at = ranges.length ? bestWindowStart(text, ranges) : 0;
  let from = Math.max(0, at - WINDOW_BEFORE);
  let to = Math.min(text.length, at + WINDOW_AFTER);
  // Cut between words when a space is near (never past the window's first match): a cut inside
  // a word would show, and mark, a piece of it (`isten(3000)` of `listen(3000)`).
  if (from > 0 && /\S/.test(text[from - 1])) from = wordStartFrom(text, from, Math.min(at, from + WORD_SNAP));
  // (`to` itself is not whitespace here; the end stays at or after `at`.)
  if (to < text.length && /\S/.test(text[to])) to = wordEndAt(text, to, Math.max(at, to - WORD_SNAP) - 1);
  // Never cut a surrogate pair.
  if (from > 0 && /[\uDC00-\uDFFF]/.test(text[from])) from--;
  if (to < text.length && /[\uDC00-\uDFFF]/.test(text[to])) to++;
  return (from > 0 ? MARKERS.crop : '') + withMarkers(text, ranges, from, to) + (to < text.length ? MARKERS.crop : '');
}

/** A fragment of a session indexed whole that holds a match, with the reader's exchange of its first match. */
interface MatchingFragment {
  /** Its number among the session's fragments (from 1), as the index numbers fragments. */
  chunk: number;
  /** Byte offset in the markdown. */
  byteStart: number;
  content: string;
  /** The exchange (reader's numbering, from 1) holding its first match, and its title. */
  exchange: number;
  title: string;
}

/**
 * The fragments of `text` holding one of `ranges` (in order, disjoint, as matchRanges gives them),
 * at most `max`, in order, found with the text's outline (its fragments and exchanges) without
 * cutting or scanning the text again.
 */
export function matchingFragments(text: string, outline: Outline, ranges: Array<[number, number]>, max: number): MatchingFragment[] {
  const out: MatchingFragment[] = [];
  const { f, x, t } = outline;
  let j = 0;
  for (let i = 0; i < f.length && out.length < max && j < ranges.length; i += 3) {
    const [start, end, byteStart] = [f[i], f[i + 1], f[i + 2]];
    // The first range ending after the fragment's start: the fragment's first match if it begins before its end.
    while (j < ranges.length && ranges[j][1] <= start) j++;
    if (j === ranges.length || ranges[j][0] >= end) continue;
    const exchange = exchangeNumberAt(x, Math.max(start, ranges[j][0]));
    out.push({ chunk: i / 3 + 1, byteStart, content: text.slice(start, end), exchange, title: t[exchange - 1] });
  }
  return out;
}
