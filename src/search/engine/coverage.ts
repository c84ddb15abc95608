/**
 * A long question's page, ranked again by how much of the question each hit holds.
 *
 * The engine's whole query for a question (planned-page.ts) requires its rarest word, and a long
 * question's rarest words are often incidental (`touch`, `deal`): the session holding most of the
 * question but not that word is found only by its words' own queries, scored low, below sessions
 * holding the rare word and little else. So, within a page, a hit whose text holds question words
 * weighing (by rarity, as in planned-page.ts) a share `c` of all of them scores at least
 * COVERAGE_WEIGHT × c. Only the page's own hits move: each page is the same set of sessions as
 * the engine ranked them, so paging stays consistent. Queries of at most FULL_WEIGHT_WORDS words
 * keep the engine's order exactly.
 */
import { FULL_WEIGHT_WORDS, wordWeight, type WordCounts } from './planned-page';
import { wordsHeld, type HeldWord } from './highlight';
import type { QueryPlan } from './query-plan';

/**
 * What a hit holding every word of the question scores at least (the engine's best is 1). On the
 * relevance fixture, 0.8 and 0.9 gave the same (agent questions recall@3 0.85 → 0.95), 0.6 and
 * 0.7 one plain question less at recall@1; 0.8 leaves the engine's whole-query matches above.
 */
export const COVERAGE_WEIGHT = 0.8;

/** A plan's words as wordsHeld looks for them: each with its other forms, the last typed as a prefix. */
export function heldWordsOf(plan: QueryPlan): HeldWord[] {
  const last = plan.words.length - 1;
  return plan.words.map((text, i) => ({ text, prefix: i === last, forms: new Set(plan.forms?.[i] ?? []) }));
}

/**
 * A hit's coverage score from its text and the ranges marked in it (matchRanges'), or null when
 * the page keeps the engine's order (at most FULL_WEIGHT_WORDS words, or no counts to weigh them).
 */
export function coverageOf(plan: QueryPlan, counts: WordCounts | undefined): ((text: string, ranges: Array<[number, number]>) => number) | null {
  if (!counts || plan.words.length <= FULL_WEIGHT_WORDS) return null;
  const words = heldWordsOf(plan);
  const weights = plan.words.map((_, i) => wordWeight(counts, i));
  const sum = weights.reduce((a, b) => a + b, 0);
  if (sum <= 0) return null;
  return (text, ranges) => {
    if (ranges.length === 0) return 0;
    const held = wordsHeld(text, ranges, words);
    return (COVERAGE_WEIGHT * held.reduce((s, h, i) => s + (h ? weights[i] : 0), 0)) / sum;
  };
}
