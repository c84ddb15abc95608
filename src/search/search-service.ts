/**
 * searchSessions: validation, filters, the engine, then a re-check of every hit against the
 * database, so that a deleted session (or one of a deleted project), or anything not the caller's,
 * never leaves the service, even while the index is catching up.
 */
import { PAGES } from '../domain/pages';
import { filtersToSql } from '../data/session-filters';
import { normalizeFilters, type SessionFilters, type SessionFiltersInput } from '../domain/filters';
import { parseInput, SearchArgs } from '../services/inputs';
import { matchesNothing } from './filter';
import type { SearchHit, SearchOptions, SearchPort } from './port';
import { recordSearch } from './timing';

export interface SearchServiceDeps {
  search: Pick<SearchPort, 'search'>;
  db: { pool: { query(sql: string, values?: unknown[]): Promise<any> } };
}

export interface SearchResultItem {
  projectId: string;
  sessionId: string;
  rank: number;
  snippet: string;
  matchingExchanges: SearchHit['matchingExchanges'];
}

export interface SearchResults {
  total: number;
  results: SearchResultItem[];
}

export const MAX_SEARCH_LIMIT = PAGES.search.max;

export async function searchSessions(
  deps: SearchServiceDeps,
  userId: string,
  query: unknown,
  filtersInput: SessionFiltersInput | null | undefined,
  limit: unknown = 10,
  offset: unknown = 0,
  options?: SearchOptions,
): Promise<SearchResults> {
  const args = parseInput(SearchArgs, { query, limit, offset });
  const filters = normalizeFilters(filtersInput);
  if (matchesNothing(filters)) return { total: 0, results: [] };
  const started = performance.now();
  try {
    return await searchChecked(deps, userId, args.query, filters, args.limit, args.offset, options);
  } finally {
    // search_duration_seconds: every search that ran, found something or not, failed or not.
    recordSearch((performance.now() - started) / 1000);
  }
}

async function searchChecked(
  deps: SearchServiceDeps,
  userId: string,
  query: string,
  filters: SessionFilters,
  limit: number,
  offset: number,
  options?: SearchOptions,
): Promise<SearchResults> {
  const page = await deps.search.search(userId, query, filters, limit, offset, options);
  if (page.hits.length === 0) return { total: page.total, results: [] };

  // One statement: the hits that still exist, are the caller's and pass the filters exactly as
  // lists apply them (the engine compares strings case-insensitively; SQL is the reference).
  const { where, params } = filtersToSql(userId, filters, 's');
  const ids = [...new Set(page.hits.map((h) => h.sessionId))];
  const rows: Array<{ projectId: string; id: string; contentDigest: string }> = await deps.db.pool.query(
    `SELECT s.projectId, s.id, s.contentDigest FROM sessions s WHERE ${where} AND s.id IN (${ids.map(() => '?').join(', ')})`,
    [...params, ...ids],
  );
  const live = new Map(rows.map((r) => [`${r.projectId}/${r.id}`, r.contentDigest]));
  // Contract §16: a hit indexed from an older version of the session (its text was replaced and
  // the index has not caught up) is dropped, so a snippet never shows replaced text.
  const current = (h: SearchHit) => {
    const digest = live.get(`${h.projectId}/${h.sessionId}`);
    return digest !== undefined && (h.contentDigest === undefined || h.contentDigest === digest);
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
    }));
  return { total: page.total, results };
}
