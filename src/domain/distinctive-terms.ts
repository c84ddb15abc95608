/**
 * The words that say what a session is about, for finding the sessions related to it without an
 * embedder (docs/search.md, "Related sessions"): the session's words weighted like TF-IDF, how
 * often the session uses a word (dampened) times how rare the word is among the documents the
 * caller can search. Pure: the counts come from the caller.
 */

/** Words that say nothing about a session's subject: English function words and the transcript's own scaffolding. */
const STOP = new Set(
  (
    'about above after again all also and any are because been before being below between both but can cannot could did does doing down during each ' +
    'few for from further had has have having her here hers him his how into its itself just let more most must myself nor not now off once only other ' +
    'our ours out over own same she should some such than that the their theirs them then there these they this those through too under until very was ' +
    'were what when where which while who whom why will with would you your yours yes yeah okay sure please thanks thank want need like make made ' +
    'get got use used using see look looks lets one two new way well still even really then there here going done try tried ' +
    'user agent assistant tool tools model claude cursor codex specstory session sessions exchange file files line lines code run running output ' +
    'result results thinking think read write edit call called function true false null undefined http https www com'
  ).split(/\s+/),
);

/** A word worth weighing: 3 to 32 letters or digits, not only digits, not a long hex digest or id. */
const isWord = (w: string) => w.length >= 3 && w.length <= 32 && !/^\d+$/.test(w) && !(w.length >= 12 && /^[0-9a-f]+$/.test(w)) && !STOP.has(w);

/** Every word of `text`, lower-cased (split where the engine splits: anything not a letter or digit). */
function wordsOf(text: string): string[] {
  return text
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter(isWord);
}

interface TermCandidate {
  term: string;
  /** Occurrences in the session's sample, title words counted extra. */
  tf: number;
}

/** How much more a word of the session's title counts than one of its text. */
const TITLE_WEIGHT = 3;

/**
 * The session's most frequent words (title words weighted up), at most `max`, most frequent
 * first (ties: the longer word, then alphabetical: deterministic).
 */
export function termCandidates(title: string, text: string, max: number): TermCandidate[] {
  const tf = new Map<string, number>();
  for (const w of wordsOf(text)) tf.set(w, (tf.get(w) ?? 0) + 1);
  for (const w of new Set(wordsOf(title))) tf.set(w, (tf.get(w) ?? 0) + TITLE_WEIGHT);
  return [...tf]
    .map(([term, n]) => ({ term, tf: n }))
    .sort((a, b) => b.tf - a.tf || b.term.length - a.term.length || (a.term < b.term ? -1 : 1))
    .slice(0, max);
}

export interface TermCounts {
  /** Documents the caller can search. */
  documents: number;
  /** Of those, how many hold each candidate (same order). */
  counts: number[];
  /** Of `documents`, those written lately (the recent index), where the counter knows them. */
  recent?: number;
}

/**
 * The `max` most distinctive candidates, most distinctive first: (1 + ln tf) × ln((N + 1) / (df + 0.5)).
 * A word no other document holds (df ≤ `own`, the session's own documents) finds nothing related
 * and is left out, as is one every document holds. Without counts, the most frequent words.
 */
export function distinctiveTerms(candidates: TermCandidate[], counts: TermCounts | null, max: number, own = 1): string[] {
  if (!counts) return candidates.slice(0, max).map((c) => c.term);
  const n = counts.documents;
  return candidates
    .map((c, i) => ({ term: c.term, df: counts.counts[i] ?? 0, weight: (1 + Math.log(c.tf)) * Math.log((n + 1) / ((counts.counts[i] ?? 0) + 0.5)) }))
    .filter((c) => c.df > own && c.df < n && c.weight > 0)
    .sort((a, b) => b.weight - a.weight || (a.term < b.term ? -1 : 1))
    .slice(0, max)
    .map((c) => c.term);
}
