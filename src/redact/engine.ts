import { PREFIXED_RULES, STRONG_NAME_WORDS, WEAK_NAME_WORDS } from './rules';
import { acceptValue, isPlaceholder, isReference, looksRandom, nameStrength } from './values';

/**
 * The scanner: one pass over the text, character by character, with O(1) work per character
 * plus bounded work per candidate (each candidate is checked by a sticky pattern with bounded
 * repetitions, and the pass resumes after a match), so the time is linear in the input whatever
 * it holds. Candidates are:
 * - a token start (a letter or digit after a non-token character, or after a JSON escape such as
 *   `\n`) whose first two characters begin an anchor of a prefixed rule;
 * - `:` or `=` after a name ending in a secret-sounding word (name/value pairs, Authorization);
 * - `://` (credentials in URLs).
 * Private keys and the few rules anchored mid-secret use native substring search.
 */

/** One secret found: [start, end) in UTF-16 code units of the scanned text, and its rule. */
export interface Span {
  start: number;
  end: number;
  rule: string;
}

const TOKEN_CHAR = 'A-Za-z0-9';
const START = `(?:(?<![${TOKEN_CHAR}])|(?<=\\\\[nrtbf]))`;
const END = `(?![${TOKEN_CHAR}])`;

interface Compiled {
  id: string;
  /** Sticky: tried at one position only. */
  re: RegExp;
  lead: number[];
  anchors: string[];
}

/** The leading literal of a pattern source (`ghp_` of `ghp_[A-Za-z0-9]{36}`). */
function leadingLiteral(pattern: string): string {
  let out = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '\\') {
      const n = pattern[i + 1];
      if (n === undefined || /[A-Za-z0-9]/.test(n)) break;
      out += n;
      i++;
    } else if ('[(|{?*+^$.'.includes(c)) {
      if ('{?*'.includes(c)) out = out.slice(0, -1);
      break;
    } else {
      out += c;
    }
  }
  return out;
}

const COMPILED: Compiled[] = PREFIXED_RULES.map((r) => {
  const anchors = r.anchors ?? [leadingLiteral(r.pattern)];
  for (const a of anchors) if (a.length < 2) throw new Error(`redact rule ${r.id}: anchor "${a}" is too short`);
  const [lo, hi] = r.lead ?? [0, 0];
  const lead = Array.from({ length: hi - lo + 1 }, (_, k) => lo + k);
  return { id: r.id, re: new RegExp(`${START}(?:${r.pattern})${END}`, 'y'), lead, anchors };
});

interface AnchorEntry {
  anchor: string;
  rules: Compiled[];
}
/** Token-start anchors by their first two characters (ASCII): index c1 * 128 + c2. */
const BY_PAIR = new Array<AnchorEntry[] | undefined>(128 * 128);
const startAnchors = [...new Set(COMPILED.filter((r) => r.lead[0] === 0 && r.lead.length === 1).flatMap((r) => r.anchors))];
for (const anchor of [...startAnchors, 'Bearer ', 'bearer ', 'BEARER '].sort((a, b) => b.length - a.length)) {
  const key = anchor.charCodeAt(0) * 128 + anchor.charCodeAt(1);
  const rules = COMPILED.filter((r) => r.lead[0] === 0 && r.anchors.some((b) => anchor.startsWith(b)));
  (BY_PAIR[key] ??= []).push({ anchor, rules });
}
/** Rules whose anchor sits inside the secret (`.atlasv1.`, `:AA`, `Q~`, `-us`). */
const MID_ANCHORED = COMPILED.filter((r) => r.lead[0] > 0 || r.lead.length > 1);

const ALNUM = new Uint8Array(128);
for (let c = 0; c < 128; c++) ALNUM[c] = /[A-Za-z0-9]/.test(String.fromCharCode(c)) ? 1 : 0;
/** Last three letters of the secret-sounding words (and `authorization`), lower case. */
const NAME_TAILS = new Set([...STRONG_NAME_WORDS, ...WEAK_NAME_WORDS, 'authorization'].map((w) => w.slice(-3)));
/** Last letters of the secret-sounding words (lower case): t n d e s y l (secret token password …). */
const NAME_LAST = new Uint8Array(128);
for (const ch of 'tndesylTNDESYL') NAME_LAST[ch.charCodeAt(0)] = 1;

/** A regular expression matching any of `words`, factored as a trie (fewer alternatives to try). */
function trieSource(words: string[]): string {
  type Node = Map<string, Node | null>;
  const root: Node = new Map();
  for (const w of words) {
    let node = root;
    for (let i = 0; i < w.length; i++) {
      const ch = w[i];
      if (node.get(ch) === null) break; // a shorter word already ends here
      if (i === w.length - 1) {
        node.set(ch, null);
        break;
      }
      if (!node.has(ch)) node.set(ch, new Map());
      node = node.get(ch)!;
    }
  }
  const esc = (ch: string) => ch.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
  const emit = (node: Node): string => {
    const parts = [...node].map(([ch, child]) => esc(ch) + (child ? emit(child) : ''));
    return parts.length === 1 ? parts[0] : `(?:${parts.join('|')})`;
  };
  return emit(root);
}

const ANCHOR_WORDS = BY_PAIR.flatMap((list) => (list ?? []).map((e) => e.anchor));
/** Word boundary first: the alternation is tried at word starts only. */
const ANCHOR_SOURCE = trieSource(ANCHOR_WORDS);
const ANCHOR_RE = new RegExp(`\\b${ANCHOR_SOURCE}`, 'g');
/** An anchor right after a JSON escape (`\nghp_…`), which `\b` does not see as a word start. */
const ESCAPED_START_RE = new RegExp(`\\\\[nrtbf](?=${ANCHOR_SOURCE})`, 'g');

/** Collects every secret span in `text` (unsorted, possibly overlapping). */
export function findSpans(text: string): Span[] {
  const spans: Span[] = [];
  ANCHOR_RE.lastIndex = 0;
  for (let m = ANCHOR_RE.exec(text); m; m = ANCHOR_RE.exec(text)) {
    const end = anchorAt(text, m.index, spans);
    if (end > m.index) ANCHOR_RE.lastIndex = end;
  }
  if (text.includes('\\')) {
    ESCAPED_START_RE.lastIndex = 0;
    for (let m = ESCAPED_START_RE.exec(text); m; m = ESCAPED_START_RE.exec(text)) {
      const end = anchorAt(text, m.index + 2, spans);
      if (end > m.index) ESCAPED_START_RE.lastIndex = end;
    }
  }
  // `:` and `=` by native search (no match objects: JSON has a colon every few bytes).
  let colon = text.indexOf(':');
  let equals = text.indexOf('=');
  let from = 0;
  while (colon !== -1 || equals !== -1) {
    if (colon !== -1 && colon < from) colon = text.indexOf(':', from);
    if (equals !== -1 && equals < from) equals = text.indexOf('=', from);
    if (colon === -1 && equals === -1) break;
    const i = colon === -1 ? equals : equals === -1 ? colon : Math.min(colon, equals);
    const end = i === colon && text.charCodeAt(i + 1) === 47 && text.charCodeAt(i + 2) === 47 ? urlAt(text, i + 3, spans) : separatorAt(text, i, spans);
    from = Math.max(i + 1, end);
  }
  for (const r of MID_ANCHORED) for (const a of r.anchors) scanMidAnchor(text, r, a, spans);
  if (text.includes('PRIVATE KEY')) scanPem(text, spans);
  return dropExcluded(text, spans);
}

function anchorAt(text: string, i: number, spans: Span[]): number {
  const c = text.charCodeAt(i);
  const c2 = text.charCodeAt(i + 1);
  const list = c < 128 && c2 < 128 ? BY_PAIR[c * 128 + c2] : undefined;
  return list ? tryAnchors(text, i, list, spans) : -1;
}

/** Tries the anchors starting at `i`; returns the end of a secret found, or -1. */
function tryAnchors(text: string, i: number, list: AnchorEntry[], spans: Span[]): number {
  for (const { anchor, rules } of list) {
    if (!text.startsWith(anchor, i)) continue;
    if (rules.length === 0) return bearerAt(text, i + anchor.length, spans);
    for (const r of rules) {
      r.re.lastIndex = i;
      const m = r.re.exec(text);
      if (m) {
        spans.push({ start: i, end: i + m[0].length, rule: r.id });
        return i + m[0].length;
      }
    }
  }
  return -1;
}

function scanMidAnchor(text: string, r: Compiled, anchor: string, spans: Span[]) {
  for (let at = text.indexOf(anchor); at >= 0; at = text.indexOf(anchor, at + 1)) {
    for (const lead of r.lead) {
      if (at - lead < 0) continue;
      r.re.lastIndex = at - lead;
      const m = r.re.exec(text);
      if (m) {
        spans.push({ start: at - lead, end: at - lead + m[0].length, rule: r.id });
        at = at - lead + m[0].length - 1;
        break;
      }
    }
  }
}

const BEARER_VALUE_RE = /[ \t]{0,3}([A-Za-z0-9._~+/-]{8,4000}=*)(?![A-Za-z0-9._~+/=-])/y;

/** `Bearer <credential>` anywhere (a header value, a curl command, a log line). */
function bearerAt(text: string, from: number, spans: Span[]): number {
  BEARER_VALUE_RE.lastIndex = from;
  const m = BEARER_VALUE_RE.exec(text);
  if (!m) return -1;
  const value = m[1];
  if (!looksRandom(value) || isPlaceholder(value)) return -1;
  const start = m.index + m[0].length - value.length;
  spans.push({ start, end: start + value.length, rule: 'authorization-header' });
  return start + value.length;
}

const AUTH_VALUE_RE = /[ \t]{0,4}(?:\\?["'`])?(?:(?:bearer|basic|token|bot|digest|apikey|sso-key|negotiate)[ \t]{1,4})?([A-Za-z0-9._~+/=-]{8,4000})/iy;

/** The credential of an `Authorization` header (after the scheme word, if any). */
function authorizationValue(text: string, from: number, spans: Span[]): number {
  AUTH_VALUE_RE.lastIndex = from;
  const m = AUTH_VALUE_RE.exec(text);
  if (!m) return -1;
  const value = m[1];
  if (!looksRandom(value) || isPlaceholder(value)) return -1;
  const start = m.index + m[0].length - value.length;
  spans.push({ start, end: start + value.length, rule: 'authorization-header' });
  return start + value.length;
}

function isNameChar(c: number): boolean {
  return (c < 128 && ALNUM[c] === 1) || c === 95 || c === 45 || c === 46; // _ - .
}

const stopTable = (chars: string) => {
  const t = new Uint8Array(128);
  for (const ch of chars) t[ch.charCodeAt(0)] = 1;
  return t;
};
const VALUE_STOP = stopTable(' \t\n\r"\'`\\,;&)]}<>|');
const isValueStop = (c: number) => c < 128 && VALUE_STOP[c] === 1;

/**
 * `:` or `=` at `i`: when the name before it ends in a secret-sounding word, the value after it.
 * Returns the end of a secret found, or -1.
 */
function separatorAt(text: string, i: number, spans: Span[]): number {
  let j = i + 1;
  const next = text.charCodeAt(j);
  if (text.charCodeAt(i) === 58 && next === 61)
    j++; // :=
  else if (text.charCodeAt(i) === 61 && next === 62)
    j++; // =>
  else if (next === 58 || next === 61) return -1; // :: ==
  const prev = text.charCodeAt(i - 1);
  if (prev === 61 || prev === 33 || prev === 60 || prev === 62 || prev === 58) return -1; // == != <= >= ::
  // The name's last letter: skip spaces, a closing quote (maybe escaped) or bracket.
  let k = i - 1;
  for (let s = 0; s < 4 && (text.charCodeAt(k) === 32 || text.charCodeAt(k) === 9); s++) k--;
  // Up to two closing characters (`"]` of `headers["X-Token"]`), each maybe escaped (`\"`).
  for (let s = 0; s < 2; s++) {
    const q = text.charCodeAt(k);
    if (q !== 34 && q !== 39 && q !== 96 && q !== 93) break;
    k--;
    if (text.charCodeAt(k) === 92) k--;
  }
  const last = text.charCodeAt(k);
  if (!(last < 128 && NAME_LAST[last] === 1)) return -1;
  if (k < 2 || !NAME_TAILS.has(text.slice(k - 2, k + 1).toLowerCase())) return -1;
  let nameStart = k;
  const limit = Math.max(0, k - 64);
  while (nameStart > limit && isNameChar(text.charCodeAt(nameStart - 1))) nameStart--;
  const name = text.slice(nameStart, k + 1);
  if (/authorization$/i.test(name)) return authorizationValue(text, j, spans);
  const strength = nameStrength(name);
  if (!strength) return -1;

  for (let s = 0; s < 4 && (text.charCodeAt(j) === 32 || text.charCodeAt(j) === 9); s++) j++;
  let quote = '';
  if (text[j] === '\\' && (text[j + 1] === '"' || text[j + 1] === "'")) {
    quote = '\\';
    j += 2;
  } else if (text[j] === '"' || text[j] === "'" || text[j] === '`') {
    quote = text[j];
    j++;
  }
  const from = j;
  const end = Math.min(text.length, from + 1000);
  if (quote) {
    while (j < end && text[j] !== quote && text[j] !== '\\' && text[j] !== '\n' && text[j] !== '\r') j++;
    if (text[j] !== quote && !(quote === '\\' && text[j] === '\\')) return -1;
  } else {
    while (j < end && !isValueStop(text.charCodeAt(j))) j++;
    while (j > from && (text[j - 1] === '.' || text[j - 1] === ':')) j--;
  }
  const value = text.slice(from, j);
  // A rejected value is skipped whole: its characters are not scanned again.
  if (!acceptValue(value, strength, Boolean(quote), name)) return quote ? -1 : j;
  spans.push({ start: from, end: j, rule: 'secret-value' });
  return j;
}

const URL_STOP = stopTable('@/?#"\'\\<>` \t\n\r[]{}|');

/** After `://`: a password (or a token as user name) before `@`. Returns the end scanned. */
function urlAt(text: string, from: number, spans: Span[]): number {
  const limit = Math.min(text.length, from + 512);
  let i = from;
  let colon = -1;
  for (let c = text.charCodeAt(i); i < limit && !(c < 128 && URL_STOP[c] === 1); c = text.charCodeAt(++i)) {
    if (c === 58 && colon < 0) colon = i;
  }
  if (text.charCodeAt(i) !== 64 /* @ */ || i === from) return -1;
  if (colon >= 0) {
    const pw = text.slice(colon + 1, i);
    if (pw.length === 0 || isPlaceholder(pw) || isReference(pw)) return -1;
    spans.push({ start: colon + 1, end: i, rule: 'url-credentials' });
  } else {
    const user = text.slice(from, i);
    if (user.length < 16 || !looksRandom(user)) return -1;
    spans.push({ start: from, end: i, rule: 'url-credentials' });
  }
  return i;
}

const PEM_BEGIN_RE = /-----BEGIN (?:[A-Z0-9]{1,12} ){0,3}PRIVATE KEY(?: BLOCK)?-----/g;
const PEM_END_RE = /-----END (?:[A-Z0-9]{1,12} ){0,3}PRIVATE KEY(?: BLOCK)?-----/y;
const PEM_MAX = 64 * 1024;
const BASE64_BODY = /[A-Za-z0-9+/=\s]/;

function scanPem(text: string, spans: Span[]) {
  // END markers are looked up in increasing order, each text position at most once (linear even
  // for many BEGIN lines without an END).
  let nextEnd = -2;
  const endAfter = (from: number): RegExpExecArray | null => {
    while (nextEnd !== -1) {
      if (nextEnd < from) nextEnd = text.indexOf('-----END ', from);
      if (nextEnd === -1) return null;
      PEM_END_RE.lastIndex = nextEnd;
      const m = PEM_END_RE.exec(text);
      if (m) return m;
      from = nextEnd + 1;
    }
    return null;
  };
  PEM_BEGIN_RE.lastIndex = 0;
  for (let m = PEM_BEGIN_RE.exec(text); m; m = PEM_BEGIN_RE.exec(text)) {
    const start = m.index;
    const bodyFrom = start + m[0].length;
    const e = endAfter(bodyFrom);
    let end: number;
    if (e && e.index - bodyFrom <= PEM_MAX) {
      end = e.index + e[0].length;
    } else {
      // Cut off (transcripts truncate long output): mask the base64 body that follows.
      end = bodyFrom;
      const limit = Math.min(text.length, bodyFrom + PEM_MAX);
      while (end < limit) {
        const c = text[end];
        if (c === '\\' && /[nrt]/.test(text[end + 1] ?? '')) end += 2;
        else if (BASE64_BODY.test(c)) end++;
        else break;
      }
      while (end > bodyFrom && /\s/.test(text[end - 1])) end--;
    }
    spans.push({ start, end, rule: 'private-key' });
    PEM_BEGIN_RE.lastIndex = Math.max(end, bodyFrom);
  }
}

// data:image/png;base64,… : never look inside an embedded image.
const DATA_URI_RE = /data:[a-z]{1,20}\/[a-z0-9.+-]{1,40};base64,/g;

function dropExcluded(text: string, spans: Span[]): Span[] {
  if (spans.length === 0 || !text.includes(';base64,')) return spans;
  const ranges: Array<[number, number]> = [];
  DATA_URI_RE.lastIndex = 0;
  for (let m = DATA_URI_RE.exec(text); m; m = DATA_URI_RE.exec(text)) {
    let end = m.index + m[0].length;
    while (end < text.length && (ALNUM[text.charCodeAt(end)] === 1 || text[end] === '+' || text[end] === '/' || text[end] === '=')) end++;
    ranges.push([m.index, end]);
    DATA_URI_RE.lastIndex = end;
  }
  if (ranges.length === 0) return spans;
  return spans.filter((s) => !ranges.some(([a, b]) => s.start >= a && s.start < b));
}
