/**
 * searchSessions, a service like the others (it takes the caller's context): validation, filters,
 * the engine (the search port), then a re-check of every hit against the database in one
 * statement that also returns the rows the results are made of, so that a deleted session (or one
 * of a deleted project), or anything not the caller's, never leaves the service, even while the
 * index is catching up.
 */
import { PAGES } from '../domain/pages';
import { sessionsMatchingAmong, type SessionRow } from '../data/sessions';
import type { SessionFilters, SessionFiltersInput } from '../domain/filters';
import { matchesNothing } from '../search/engine/filter';
import type { SearchHit, SearchOptions } from '../search/engine/port';
import { recordSearch } from '../search/engine/timing';
import type { Ctx } from './context';
import { scopesFor } from './access';
import { filtersOf, parseInput, SearchArgs } from './inputs';

export interface SearchResultItem {
  projectId: string;
  sessionId: string;
  rank: number;
  snippet: string;
  matchingExchanges: SearchHit['matchingExchanges'];
  /** The session's row as the re-check read it: what the results are made of (no second read). */
  session: SessionRow;
}

export interface SearchResults {
  total: number;
  results: SearchResultItem[];
}

export const MAX_SEARCH_LIMIT = PAGES.search.max;

export async function searchSessions(
  ctx: Ctx,
  query: unknown,
  filtersInput: SessionFiltersInput | null | undefined,
  limit: unknown = 10,
  offset: unknown = 0,
  options?: SearchOptions,
): Promise<SearchResults> {
  const args = parseInput(SearchArgs, { query, limit, offset });
  const filters = filtersOf(filtersInput);
  if (matchesNothing(filters)) return { total: 0, results: [] };
  const started = performance.now();
  try {
    return await searchChecked(ctx, args.query, filters, args.limit, args.offset, options);
  } finally {
    // search_duration_seconds: every search that ran, found something or not, failed or not.
    recordSearch((performance.now() - started) / 1000);
  }
}

async function searchChecked(ctx: Ctx, query: string, filters: SessionFilters, limit: number, offset: number, options?: SearchOptions): Promise<SearchResults> {
  // The scopes the caller holds now (membership read for this request): a removed member's
  // searches return none of the team's sessions, and count none, from the next request.
  const scopes = await scopesFor(ctx, filters.teamIds);
  if (scopes.length === 0) return { total: 0, results: [] };
  const page = await ctx.deps.search.search(scopes, query, filters, limit, offset, options);
  if (page.hits.length === 0) return { total: page.total, results: [] };

  // One statement: the hits that still exist, are the caller's and pass the filters exactly as
  // lists apply them (the engine compares strings case-insensitively; SQL is the reference).
  const ids = [...new Set(page.hits.map((h) => h.sessionId))];
  const rows = await sessionsMatchingAmong(ctx.deps.db.reads, scopes, filters, ids);
  const live = new Map(rows.map((r) => [`${r.projectId}/${r.id}`, r]));
  // A hit indexed from an older version of the session (its text was replaced and
  // the index has not caught up) is dropped, so a snippet never shows replaced text.
  const current = (h: SearchHit) => {
    const row = live.get(`${h.projectId}/${h.sessionId}`);
    return row !== undefined && (h.contentDigest === undefined || h.contentDigest === row.contentDigest);
  };
  const results = page.hits
    .filter(current)
    .sort((a, b) => b.rank - a.rank)
    .map((h) => ({
      projectId: h.projectId,
      sessionId: h.sessionId,
      rank: h.rank,
      snippet: h.snippet,
      matchingExchanges: h.matchingExchanges,
      session: live.get(`${h.projectId}/${h.sessionId}`)!,
    }));
  return { total: page.total, results };
}
