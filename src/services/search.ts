/**
 * searchSessions, a service like the others (it takes the caller's context): validation, filters,
 * the engine (the search port), then a re-check of every hit against the database in one
 * statement that also returns the rows the results are made of, so that a deleted session (or one
 * of a deleted project), or anything not the caller's, never leaves the service, even while the
 * index is catching up.
 */
import { PAGES } from '../domain/pages';
import { sessionsMatchingAmong } from '../data/sessions';
import type { SessionRow } from '../domain/session-row';
import type { SessionFiltersInput } from '../domain/filters';
import { matchesNothing } from '../search/engine/filter';
import { matchRanges, snippetSource, termsOfPlan } from '../search/engine/highlight';
import { planQuery } from '../search/engine/query-plan';
import { buildSnippet } from '../search/engine/snippet';
import type { SearchHit, SearchOptions, SearchRequest } from '../search/engine/port';
import { recordSearch } from '../search/engine/timing';
import type { Ctx } from './context';
import { scopesFor } from './access';
import { filtersOf, SearchArgs } from './inputs';
import { parseInput } from '../domain/inputs';
import { invalid } from '../errors';

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

/** A search as a door receives it: validated here. */
interface SearchInput extends SearchOptions {
  query: unknown;
  filters?: SessionFiltersInput | null;
  /** Default PAGES.search.def. */
  limit?: unknown;
  offset?: unknown;
}

export async function searchSessions(ctx: Ctx, input: SearchInput): Promise<SearchResults> {
  const { query, limit = PAGES.search.def, offset = PAGES.searchOffset.def, matchingExchanges, allWords, knownCounts, countTotal, wordForms, lexical } = input;
  const args = parseInput(SearchArgs, { query, limit, offset });
  const filters = filtersOf(input.filters);
  // The index holds no costs: a search filtered by cost would answer as if unfiltered.
  if (filters.costFrom !== undefined || filters.costTo !== undefined) throw invalid('minCostUsd and maxCostUsd filter session lists, not searches');
  if (matchesNothing(filters)) return { total: 0, results: [] };
  const started = performance.now();
  try {
    // The scopes the caller holds now (the memberships read with their credential in this
    // request): a removed member's searches return and count none of the team's sessions from the
    // next request.
    const scopes = await scopesFor(ctx, filters.teamIds);
    return await searchWithScopes(ctx, {
      scopes,
      query: args.query,
      filters,
      limit: args.limit,
      offset: args.offset,
      matchingExchanges,
      allWords,
      knownCounts,
      countTotal,
      wordForms,
      lexical,
    });
  } finally {
    // search_duration_seconds: every search that ran, found something or not, failed or not.
    recordSearch((performance.now() - started) / 1000);
  }
}

/**
 * The caller's sessions nearest to `vector` (a session's own, for related sessions) by the
 * engine's vector search, in every scope the caller reads, re-checked like every search.
 */
export async function searchByVector(ctx: Ctx, vector: number[], limit: number): Promise<SearchResults> {
  const scopes = await scopesFor(ctx);
  return searchWithScopes(ctx, { scopes, query: '', filters: filtersOf(undefined), limit, offset: 0, matchingExchanges: true, countTotal: false, vector });
}

async function searchWithScopes(ctx: Ctx, request: SearchRequest): Promise<SearchResults> {
  const { filters, scopes } = request;
  if (scopes.length === 0) return { total: 0, results: [] };
  // One statement: the hits that still exist, are the caller's and pass the filters exactly as
  // lists apply them (the engine compares strings case-insensitively; SQL is the reference).
  // Started as soon as the engine has ranked the page, while the port marks its hits.
  const recheck = (ids: string[]) => sessionsMatchingAmong(ctx.deps.db.reads, scopes, filters, ids);
  const idsOf = (hits: ReadonlyArray<{ sessionId: string }>) => [...new Set(hits.map((h) => h.sessionId))];
  let early: { ids: string[]; rows: Promise<SessionRow[]> } | null = null;
  const onRanked = (hits: ReadonlyArray<{ sessionId: string }>) => {
    const ids = idsOf(hits);
    const rows = recheck(ids);
    // Awaited below, or not at all when the search fails or its page differs.
    rows.catch(() => undefined);
    early = { ids, rows };
  };
  const page = await ctx.deps.search.search({ ...request, onRanked });
  if (page.hits.length === 0) return { total: page.total, results: [] };

  const ids = idsOf(page.hits);
  const started = early as { ids: string[]; rows: Promise<SessionRow[]> } | null;
  const rows = started && sameIds(started.ids, ids) ? await started.rows : await recheck(ids);
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

/** The same ids (sessions, scopes), in any order (each list without repeats). */
function sameIds(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  const set = new Set(a);
  return b.every((id) => set.has(id));
}

/** Characters (code points, `…` included) of a matching exchange's snippet: shorter than a result's, three fit one result. */
const EXCHANGE_SNIPPET_MAX = 160;

/**
 * Makes matching exchanges' snippets for one query (its terms worked out once): an exchange's text
 * around its best match, HTML-escaped, the query's words (their other forms and typos included) in
 * <mark>…</mark>, as the result's snippet is marked.
 */
export function exchangeSnippets(query: string): (content: string) => string {
  const terms = termsOfPlan(planQuery(query));
  return (content) => buildSnippet(snippetSource(content, matchRanges(content, terms)), EXCHANGE_SNIPPET_MAX);
}
