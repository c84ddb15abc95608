/**
 * A search over several engines (engines.ts): the caller's scopes are grouped by the engine
 * holding them (placement.ts) and only those engines are asked, in parallel, each filtered to the
 * caller's scopes it holds. Each is asked for the first offset + limit sessions; the pages are
 * merged by ranking score (every engine ranks with the same settings, so scores compare), totals
 * added up, and offset/limit applied to the merge. An engine whose primary fails (refused, reset,
 * timed out, 5xx, or its index gone) is asked again at once on its standby, and the primary stays
 * out of searches until a health probe passes.
 */
import { AppError } from '../../errors';
import { searchIndex } from './adapter';
import type { SearchEngine } from './engines';
import { scopesByEngine } from './placement';
import type { SearchHit, SearchPage, SearchRequest } from './port';

interface FanoutTarget {
  engines: SearchEngine[];
  indexes: { main: string; recent: string };
  /** An engine answered without our index (data reset): recreate it. */
  onIndexMissing?: (engine: SearchEngine, role: 'primary' | 'standby') => void;
  /** Which engines a search asked (tests). */
  onAsked?: (positions: number[]) => void;
}

const isUnavailable = (err: unknown) => err instanceof AppError && err.code === 'SERVICE_UNAVAILABLE';

/** One engine's page: from its primary, else (down, or failing now) from its standby. */
async function searchEngine(t: FanoutTarget, engine: SearchEngine, request: SearchRequest): Promise<SearchPage> {
  const standby = engine.standby;
  if (!standby || engine.primaryUp()) {
    try {
      return await searchIndex(
        {
          conns: engine.primary,
          indexes: t.indexes,
          onIndexMissing: () => t.onIndexMissing?.(engine, 'primary'),
          onUnreachable: standby ? (err) => engine.primaryFailed(err) : undefined,
        },
        request,
      );
    } catch (err) {
      if (!standby || !isUnavailable(err)) throw err;
    }
  }
  return searchIndex(
    {
      conns: standby,
      indexes: t.indexes,
      onIndexMissing: () => t.onIndexMissing?.(engine, 'standby'),
      onUnreachable: (err) => {
        for (const c of engine.standbyConns()) c.reportFailure(err);
      },
    },
    request,
  );
}

/** The pages of several engines merged by rank (ties: the lower engine position first), then [offset, offset + limit). */
function mergePages(pages: SearchPage[], offset: number, limit: number): SearchPage {
  const hits: SearchHit[] = pages.flatMap((p) => p.hits);
  // Array.prototype.sort is stable: equal ranks keep the engines' order and each engine's own order.
  hits.sort((a, b) => b.rank - a.rank);
  return { total: pages.reduce((n, p) => n + p.total, 0), hits: hits.slice(offset, offset + limit) };
}

export async function searchEngines(t: FanoutTarget, request: SearchRequest): Promise<SearchPage> {
  const groups = [...scopesByEngine(request.scopes, t.engines.length)].sort(([a], [b]) => a - b);
  t.onAsked?.(groups.map(([position]) => position));
  if (groups.length === 1) {
    const [[position, scopes]] = groups;
    return searchEngine(t, t.engines[position], { ...request, scopes });
  }
  const { offset, limit } = request;
  const pages = await Promise.all(
    // Each engine's page is longer than the merged one: the caller re-checks the merged page.
    groups.map(([position, scopes]) => searchEngine(t, t.engines[position], { ...request, scopes, offset: 0, limit: offset + limit, onRanked: undefined })),
  );
  return mergePages(pages, offset, limit);
}
