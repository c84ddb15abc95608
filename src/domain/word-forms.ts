/**
 * Word forms and identifier parts, for the search index's `forms` attribute and the queries asked
 * of it (docs/search.md, "Word forms and identifiers").
 *
 * - English inflections find each other: every word is reduced to its stem with the Porter2
 *   (English Snowball) stemmer of `wink-porter2-stemmer` (`retry`, `retries`, `retried` and
 *   `retrying` are all `retri`). The index keeps the exact text as it is; the stems go to an
 *   attribute of their own, marked (FORM_MARK), that only the (lower-weighted) forms queries
 *   ask for, so the exact form ranks first.
 * - camelCase and PascalCase identifiers are split into their parts (`retryWithBackoff` →
 *   `retry`, `with`, `backoff`; `XMLHttpRequest` → `xml`, `http`, `request`), whose stems go to
 *   the same attribute. The engine's tokenizer already splits snake_case, kebab-case, dotted and
 *   path-like identifiers (`_`, `-`, `.` and `/` separate words), but not case changes.
 */
import stemWord from 'wink-porter2-stemmer';
import { keptApart } from './kept-apart';

/** Longer tokens (hashes, base64) are no words: neither stemmed nor split. */
const MAX_WORD = 48;
/** Stems remembered (a transcript repeats its words; most archives share a vocabulary). */
const CACHE_MAX = 200_000;
const cache = new Map<string, string>();

const DIGITS_RE = /^\p{N}+$/u;

/** The stem of a lower-case word (itself when it is no English word to reduce). */
export function stemOf(word: string): string {
  if (word.length > MAX_WORD || word.length < 3 || DIGITS_RE.test(word)) return word;
  let s = cache.get(word);
  if (s === undefined) {
    s = stemWord(word);
    if (cache.size >= CACHE_MAX) cache.clear();
    cache.set(word, s);
  }
  return s;
}

/** Case changes inside a word: lower→upper (`retryWith`), or an acronym's end (`XMLHttp`). */
const CAMEL_RE = /\p{Ll}\p{Lu}|\p{Lu}\p{Lu}\p{Ll}/u;
const PART_RE = /\p{Lu}+(?!\p{Ll})|\p{Lu}?\p{Ll}+|\p{N}+/gu;

/** The parts of a camelCase or PascalCase word, lower-cased (empty when it has no case change). */
export function identifierParts(word: string): string[] {
  if (word.length > MAX_WORD || !CAMEL_RE.test(word)) return [];
  return (word.match(PART_RE) ?? []).map((p) => p.toLowerCase());
}

/**
 * Forms are held with this mark before them, so that no query for the words as written matches
 * them (`qqfconnect`, the stem of `connection`, is no `connect`), and the forms query asks for
 * marked stems only. The engine cannot be told which attributes a query searches when some
 * document lacks one of them, so the mark keeps the two apart instead.
 */
const FORM_MARK = 'qqf';
/** Words that get forms: English is written in ASCII letters (and digits in identifiers). */
const FORMABLE_RE = /^[a-z0-9]*[a-z][a-z0-9]*$/;

/** The marked form of a stem, or the word itself when it gets none (numbers, other scripts). */
export const markedForm = (stem: string) => (FORMABLE_RE.test(stem) ? FORM_MARK + stem : stem);

/** A word as written (its case kept) → the marked forms the index holds for it: its stem, then its parts' stems. */
function formsOfWord(word: string): string[] {
  const lower = word.toLowerCase();
  if (!FORMABLE_RE.test(lower)) return [];
  return [FORM_MARK + stemOf(lower), ...identifierParts(word).map((part) => markedForm(stemOf(part)))];
}

/** A word as the index and the highlighter see it (the same as search-documents.ts WORD_RE). */
const WORD_RE = /[\p{L}\p{N}\p{M}]+/gu;

/**
 * The `forms` attribute of a text: the marked stems of its words and of its identifiers' parts,
 * each word's together, at most `limit` forms. A stem already listed on its own is not listed
 * again on its own; an identifier's forms are listed once per identifier. Each word's forms are
 * kept apart from the next's (kept-apart.ts), so that the engine records no pairs of unrelated
 * stems, while an identifier's stay together (`retry backoff` still ranks `retryWithBackoff` by
 * their proximity).
 */
export function formsOf(texts: readonly string[], limit: number): string {
  const groups = new Set<string>();
  const words = new Set<string>();
  let count = 0;
  for (const text of texts) {
    WORD_RE.lastIndex = 0;
    for (let m = WORD_RE.exec(text); m && count < limit; m = WORD_RE.exec(text)) {
      if (words.has(m[0])) continue;
      words.add(m[0]);
      const forms = formsOfWord(m[0]);
      if (forms.length === 0) continue;
      const group = forms.slice(0, limit - count).join(' ');
      if (groups.has(group)) continue;
      groups.add(group);
      count += forms.length;
    }
  }
  return keptApart(groups, count);
}

/**
 * What a forms query asks for one query word as written (unmarked): its stem, or the stems of its
 * parts when it is an identifier (those not in `skip`, the question's stop words, unless that
 * leaves nothing). A word that gets no forms is asked as it is.
 */
export function queryFormsOf(word: string, skip: ReadonlySet<string>): string[] {
  const lower = word.toLowerCase();
  if (!FORMABLE_RE.test(lower)) return [lower];
  const parts = identifierParts(word);
  if (parts.length === 0) return [stemOf(lower)];
  const meaningful = parts.filter((p) => !skip.has(p));
  return [...new Set((meaningful.length ? meaningful : parts).map(stemOf))];
}
