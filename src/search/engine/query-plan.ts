/**
 * What the engine is asked for a query (docs/search.md, "Query syntax"). People ask their archive
 * questions in their own words ("what did we decide about rate limiting?"): no word of a question
 * may decide alone whether a session is found.
 * - Words that carry no meaning in a question (`how`, `did`, `we`, `what`, `about`, `the`, …) are
 *   left out, unless the query has nothing else.
 * - The engine reads only the first 10 words of a query and drops the rest silently; when more
 *   than 10 words remain, the longest are kept (long words are the rarer, more telling ones), in
 *   the order of the query.
 * - `"Quoted phrases"` are kept whole and stay required.
 */
import { WORD_RE } from '../../domain/search-documents';
import { queryFormsOf } from '../../domain/word-forms';

/** Words the engine counts in one query (Meilisearch ignores the words past its 10th). */
export const ENGINE_WORDS = 10;

/** Words a question carries that say nothing about what to find. */
export const STOP_WORDS: ReadonlySet<string> = new Set(
  (
    'a about after again all also am an and any are as at be been before being but by can could did do does doing done for from ' +
    'had has have having he her here hers him his how i if in into is it its just me my no nor not now of on once only or other ' +
    'our ours out over own same she should so some such than that the their theirs them then there these they this those through ' +
    'to too under until up us very was we were what when where which while who whom why will with would you your yours ' +
    // Pieces of contractions (WORD_RE splits "we're" into "we" and "re").
    's t m re ve ll d'
  ).split(' '),
);

export interface QueryPlan {
  /** The query the engine gets: the phrases as quoted, then the words kept, space-separated. */
  q: string;
  /** The loose words kept (lower case, without repeats), in query order. */
  words: string[];
  /** The quoted phrases, as written between the quotes. */
  phrases: string[];
  /**
   * Per kept word, what its forms query asks (word-forms.ts): its stem, or its parts' stems when
   * it is a camelCase identifier. Absent: no forms query (the upload CLI's resume search).
   */
  forms?: string[][];
}

const wordsIn = (s: string) => (s.match(WORD_RE) ?? []).map((w) => w.toLowerCase());

/** The engine's query for `query`: stop words out, at most ENGINE_WORDS words, phrases whole. */
export function planQuery(query: string): QueryPlan {
  const parts = query.split('"');
  const phrases: string[] = [];
  // Each word as first written (its case tells an identifier's parts), by its lower case.
  const written = new Map<string, string>();
  parts.forEach((part, i) => {
    // Odd parts are inside quotes (an unclosed quote runs to the end, as the engine reads it).
    if (i % 2 === 1 && i < parts.length - 1) {
      if (wordsIn(part).length > 0) phrases.push(part.trim());
    } else for (const w of part.match(WORD_RE) ?? []) if (!written.has(w.toLowerCase())) written.set(w.toLowerCase(), w);
  });
  const distinct = [...written.keys()];
  const meaningful = distinct.filter((w) => !STOP_WORDS.has(w));
  let words = meaningful.length > 0 || phrases.length > 0 ? meaningful : distinct;
  const room = Math.max(0, ENGINE_WORDS - phrases.reduce((n, p) => n + wordsIn(p).length, 0));
  if (words.length > room) {
    const kept = new Set([...words].sort((a, b) => b.length - a.length).slice(0, room));
    words = words.filter((w) => kept.has(w));
  }
  const q = [...phrases.map((p) => `"${p}"`), ...words].join(' ');
  return { q, words, phrases, forms: words.map((w) => queryFormsOf(written.get(w) ?? w, STOP_WORDS)) };
}
