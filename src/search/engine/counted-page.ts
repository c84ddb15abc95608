import type { Index, SearchParams, SearchResponse } from 'meilisearch';
import { hasEngineCode } from './http-client';
import { largeSessionsCount } from './count-cache';
import { MAX_TOTAL_HITS } from './index-settings';

/**
 * Hits [from, from + count) of `index` for `query` (ranked and collapsed per session with the
 * `distinct` of `params`) and how many sessions match in all, exactly up to MAX_TOTAL_HITS.
 *
 * The engine's exhaustive count (page mode with `distinct`) looks up the distinct value of every
 * matching document, thousands for a member of many teams: most of such a search's time (at
 * 100k sessions, 38 of the engine's 41 ms at p95 for a member of 20 teams). Whole-indexed
 * sessions are one document each, so they are counted without it: limit/offset ranks exactly as
 * page mode does, and the facet count of `whole` among the matching documents is the number of
 * whole sessions. When that is all of the matching documents, it is the total; otherwise the
 * other documents (large sessions, or documents indexed before `whole` existed) are counted with
 * `distinct` in a second request, over those documents only: sent with the page while this
 * filter's searches find large sessions (count-cache.ts, largeSessionsCount), else after it.
 */
export async function countedPage<D extends Record<string, unknown>>(
  index: Index<D>,
  query: string,
  params: SearchParams & { filter: string },
  from: number,
  count: number,
): Promise<{ total: number; hits: SearchResponse<D>['hits'] }> {
  // Matching sessions counted by the engine's exhaustive `distinct` (hits not asked for).
  const countedExactly = async (filter: string) =>
    (
      await index.search(query, {
        filter,
        distinct: params.distinct,
        matchingStrategy: params.matchingStrategy,
        hitsPerPage: 0,
        page: 1,
      })
    ).totalHits ?? 0;
  const large = largeSessionsCount(index.uid, params.filter, () => countedExactly(`(${params.filter}) AND NOT whole = true`));
  let res: SearchResponse<D>;
  try {
    res = await index.search(query, { ...params, limit: count, offset: from, facets: ['whole'] });
  } catch (err) {
    if (!hasEngineCode(err, 'invalid_search_facets')) throw err;
    // `whole` is not filterable (yet): the settings are applied at start, after a long engine
    // task perhaps, or an instance of an older version applied its own. Counted exhaustively.
    const [page, total] = await Promise.all([index.search(query, { ...params, limit: count, offset: from }), countedExactly(params.filter)]);
    return { total, hits: page.hits };
  }
  // Capped at MAX_TOTAL_HITS by the engine, like every count it returns.
  const matching = res.estimatedTotalHits ?? 0;
  const whole = res.facetDistribution?.whole?.true ?? 0;
  if (whole >= MAX_TOTAL_HITS) return { total: MAX_TOTAL_HITS, hits: res.hits };
  if (matching < MAX_TOTAL_HITS && matching === whole) return { total: whole, hits: res.hits };
  const others = await large.needed();
  return { total: Math.min(MAX_TOTAL_HITS, whole + others), hits: res.hits };
}
