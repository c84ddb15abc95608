/**
 * searchSessions: validation, filters, the engine, then a re-check of every hit against the
 * database, so that a deleted session (or one of a deleted project), or anything not the caller's,
 * never leaves the service, even while the index is catching up.
 */
import { invalid } from '../errors';
import { filtersToSql, normalizeFilters, type SessionFilters, type SessionFiltersInput } from '../services/filters';
import { WORD_RE } from './documents';
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

export const MAX_SEARCH_LIMIT = 200;
/** Contract §16: a query's work (engine, highlighter) is bounded by these. */
export const MAX_QUERY_CHARS = 512;
export const MAX_QUERY_WORDS = 32;

/** Too long, or too many distinct words (repeated words count once) → VALIDATION_ERROR. */
function checkQuerySize(query: string): void {
  if (query.length > MAX_QUERY_CHARS) throw invalid(`Invalid value for query: at most ${MAX_QUERY_CHARS} characters`);
  const words = new Set<string>();
  WORD_RE.lastIndex = 0;
  for (let m = WORD_RE.exec(query); m; m = WORD_RE.exec(query)) words.add(m[0].toLowerCase());
  if (words.size > MAX_QUERY_WORDS) throw invalid(`Invalid value for query: at most ${MAX_QUERY_WORDS} different words`);
}

export async function searchSessions(
  deps: SearchServiceDeps,
  userId: string,
  query: unknown,
  filtersInput: SessionFiltersInput | null | undefined,
  limit: unknown = 10,
  offset: unknown = 0,
  options?: SearchOptions,
): Promise<SearchResults> {
  if (typeof query !== 'string' || query.trim() === '') throw invalid('Invalid value for query: must not be empty');
  checkQuerySize(query.trim());
  if (!Number.isInteger(limit) || (limit as number) < 1 || (limit as number) > MAX_SEARCH_LIMIT) {
    throw invalid(`Invalid value for limit: must be an integer from 1 to ${MAX_SEARCH_LIMIT}`);
  }
  if (!Number.isInteger(offset) || (offset as number) < 0) throw invalid('Invalid value for offset: must be an integer of at least 0');
  const filters = normalizeFilters(filtersInput);
  if (matchesNothing(filters)) return { total: 0, results: [] };
  const started = performance.now();
  try {
    return await searchChecked(deps, userId, query.trim(), filters, limit as number, offset as number, options);
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
