/**
 * One page of an index's hits for a query plan (query-plan.ts), ranked so that no word is a gate.
 *
 * The engine has no "any of these words": asked for several words, it either requires them all
 * (`matchingStrategy: all`) or drops them in a fixed order until something matches (`last`, from
 * the end; `frequency`, the commonest first), and the word it drops last is still required. So a
 * query of several words is asked as a federated search (one request, results merged by score):
 * - the whole query with `last`: sessions holding all its words rank first, then those holding
 *   the first words;
 * - each word on its own (phrases kept), weighted down: a session holding any one word is found,
 *   below those holding more of them.
 * A query of one word (or phrases only) is asked as it is, every part required.
 */
import type { Meilisearch, SearchParams, SearchResponse } from 'meilisearch';
import type { QueryPlan } from './query-plan';

/** Weight of the rarest word's own query against the whole query's; commoner words weigh less. */
export const WORD_WEIGHT = 0.5;

export interface PlannedPage<D> {
  total: number;
  hits: SearchResponse<D>['hits'];
}

/** How many documents hold each word of a plan (with its phrases), and how many there are, among `filter`'s. */
export interface WordCounts {
  documents: number;
  /** Per plan word, in plan order. */
  holding: number[];
}

/** One request counting, among `filter`'s documents, those holding each word of the plan. */
export async function wordCounts(client: Meilisearch, indexUid: string, plan: QueryPlan, filter: string): Promise<WordCounts> {
  const phrases = plan.phrases.map((p) => `"${p}"`);
  const queries = ['', ...plan.words].map((w) => ({ indexUid, q: w ? [...phrases, w].join(' ') : '', filter, limit: 0 }));
  const res = (await client.multiSearch({ queries })) as { results: Array<{ estimatedTotalHits?: number }> };
  const counts = res.results.map((r) => r.estimatedTotalHits ?? 0);
  return { documents: counts[0], holding: counts.slice(1) };
}

/** Inverse document frequency (BM25's, never negative). */
const idf = (documents: number, holding: number) => Math.log(1 + (documents - holding + 0.5) / (holding + 0.5));

/**
 * The queries of a plan of several words (null: asked as one query): words no document holds
 * are left out; the whole query lists the rarest words first (so that `last` drops the commonest
 * first), and each word's own query weighs by its rarity.
 */
export function federatedQueries(plan: QueryPlan, counts?: WordCounts): Array<{ q: string; matchingStrategy: 'last' | 'all'; weight: number }> | null {
  if (plan.words.length < 2) return null;
  const phrases = plan.phrases.map((p) => `"${p}"`);
  let words = plan.words.map((w, i) => ({ w, weight: 1, holding: counts?.holding[i] ?? 1 }));
  if (counts) {
    words = words.filter((x) => x.holding > 0);
    if (words.length === 0) return null;
    const top = Math.max(...words.map((x) => idf(counts.documents, x.holding)));
    for (const x of words) x.weight = top > 0 ? idf(counts.documents, x.holding) / top : 1;
    words.sort((a, b) => a.holding - b.holding);
  }
  return [
    { q: [...phrases, ...words.map((x) => x.w)].join(' '), matchingStrategy: 'last', weight: 1 },
    ...words.map((x) => ({ q: [...phrases, x.w].join(' '), matchingStrategy: 'all' as const, weight: WORD_WEIGHT * x.weight })),
  ];
}

/** Large sessions counted per request (a user's large sessions matching any word); past it, `total` says at least this many. */
const LARGE_COUNTED = 1000;

type Federated<D> = {
  hits: Array<SearchResponse<D>['hits'][number] & { _federation?: { weightedRankingScore?: number } }>;
  estimatedTotalHits?: number;
  facetsByIndex?: Record<string, { distribution?: { whole?: Record<string, number> } }>;
};

/**
 * Hits [from, from + count) of `indexUid` for a plan of several words, each hit's `_rankingScore`
 * its weighted score, and how many sessions hold any of its parts. The merged documents are
 * counted by `whole` (their facet): a session indexed whole is one document, counted as it is;
 * a large session has several (its word list and fragments), so when some matched, the large
 * sessions are listed by one more request (distinct per query, united here).
 * `params` are the page's (filter, distinct, attributes, showRankingScore).
 */
export async function federatedPage<D extends Record<string, unknown>>(
  client: Meilisearch,
  indexUid: string,
  queries: NonNullable<ReturnType<typeof federatedQueries>>,
  params: SearchParams,
  from: number,
  count: number,
): Promise<PlannedPage<D>> {
  const { filter, distinct, attributesToRetrieve, showRankingScore } = params;
  const each = (extra: string | null) =>
    queries.map((q) => ({
      indexUid,
      q: q.q,
      matchingStrategy: q.matchingStrategy,
      filter: extra ? `(${String(filter)}) AND ${extra}` : filter,
      distinct,
      federationOptions: { weight: q.weight },
    }));
  const res = (await client.multiSearch({
    federation: { limit: count, offset: from, facetsByIndex: { [indexUid]: ['whole'] } },
    queries: each(null).map((q) => ({ ...q, attributesToRetrieve, showRankingScore })),
  } as never)) as unknown as Federated<D>;
  const hits = res.hits.map((h) => ({ ...h, _rankingScore: h._federation?.weightedRankingScore ?? h._rankingScore }));
  const byWhole = res.facetsByIndex?.[indexUid]?.distribution?.whole;
  if (!byWhole) return { total: res.estimatedTotalHits ?? hits.length, hits };
  let total = byWhole.true ?? 0;
  if ((byWhole.false ?? 0) > 0) {
    const large = (await client.multiSearch({
      queries: each('whole = false').map(({ federationOptions: _, ...q }) => ({ ...q, attributesToRetrieve: ['sessionDigest'], limit: LARGE_COUNTED })),
    } as never)) as unknown as { results: Array<{ hits: Array<{ sessionDigest: string }> }> };
    total += new Set(large.results.flatMap((r) => r.hits.map((h) => h.sessionDigest))).size;
  }
  return { total, hits };
}
