import type { SearchParams, SearchResponse } from 'meilisearch';
import { AppError, MESSAGES } from '../errors';
import type { SessionFilters } from '../services/filters';
import type { MeiliConnection } from './connection';
import { documentIdOf, sessionKeyOf, type SessionDocument } from './documents';
import { fragmentsWithMatches, matchRanges, parseQuery, snippetSource } from './highlight';
import { matchesNothing, meiliString, searchFilter } from './filter';
import { isEngineUnreachable } from './http-client';
import { isIndexNotFound } from './index-settings';
import type { SearchHit, SearchOptions, SearchPage } from './port';
import { buildSnippet, MARKERS } from './snippet';

/** Words Meilisearch keeps around the match before we trim to 240 characters. */
const CROP_WORDS = 48;
/** Matching fragments returned per session (the rest are counted out). */
export const MAX_EXCHANGES_PER_SESSION = 20;

type Doc = Pick<SessionDocument, 'projectId' | 'sessionId' | 'chunk' | 'chunks' | 'sessionKey' | 'content'>;

const unavailable = () => new AppError('SERVICE_UNAVAILABLE', MESSAGES.unavailable);

/** The engine's crop and highlight, used on fragments only (see highlight.ts for whole documents). */
const crop = {
  attributesToCrop: ['content'],
  cropLength: CROP_WORDS,
  cropMarker: MARKERS.crop,
  attributesToHighlight: ['content'],
  highlightPreTag: MARKERS.pre,
  highlightPostTag: MARKERS.post,
} satisfies SearchParams;

const exchange = (sessionId: string, chunk: number, content: string) => ({ id: `${sessionId}:${chunk}`, content, orderNumber: chunk });

/** Ranks are in (0, 1]: a match never scores 0 to the client. */
const clampRank = (score: number | undefined) => Math.min(1, Math.max(Number(score ?? 0), 1e-6));

/**
 * One page of a user's sessions matching `query`: documents collapsed per session, every query
 * word required somewhere in the session (typo-tolerant, prefix on the last word, "quoted phrases"
 * exact), owner filter always on.
 */
export async function searchIndex(
  conn: MeiliConnection,
  indexUid: string,
  userId: string,
  query: string,
  filters: SessionFilters,
  limit: number,
  offset: number,
  options: SearchOptions = {},
  /** Called when the engine answers but our index is gone (engine data reset): recreate it. */
  onIndexMissing?: () => void,
): Promise<SearchPage> {
  if (matchesNothing(filters)) return { total: 0, hits: [] };
  const filter = searchFilter(userId, filters);
  const common: SearchParams = { filter, distinct: 'sessionKey', matchingStrategy: 'all' };
  const pageParams: SearchParams = {
    ...common,
    showRankingScore: true,
    // The stored text, not the engine's crop: see highlight.ts.
    attributesToRetrieve: ['projectId', 'sessionId', 'chunk', 'chunks', 'content'],
  };

  try {
    const client = conn.searcher();
    let total: number;
    let raw: SearchResponse<Doc>['hits'];
    if (offset % limit === 0) {
      // Page mode counts sessions exhaustively (estimatedTotalHits would count chunks).
      const res = await client.index<Doc>(indexUid).search(query, { ...pageParams, hitsPerPage: limit, page: offset / limit + 1 });
      total = res.totalHits ?? 0;
      raw = res.hits;
    } else {
      const res = (await client.multiSearch({
        queries: [
          { indexUid, q: query, ...pageParams, limit, offset },
          { indexUid, q: query, ...common, hitsPerPage: 0, page: 1 },
        ],
      })) as { results: Array<SearchResponse<Doc>> };
      raw = res.results[0].hits;
      total = res.results[1].totalHits ?? 0;
    }

    const wantExchanges = options.matchingExchanges !== false;
    const terms = parseQuery(query);
    const hits: DetailedHit[] = raw.map((h) => {
      const hit: DetailedHit = {
        projectId: h.projectId,
        sessionId: h.sessionId,
        rank: clampRank(h._rankingScore),
        snippet: null,
        matchingExchanges: [],
        fragmented: h.chunks > 0 || h.chunk > 0,
      };
      const content = String(h.content ?? '');
      // A session indexed whole (or the fragment of a large one that matched): marked here. A
      // large session matched on its word list has no text: its fragments give the snippet.
      if (!hit.fragmented || content) {
        const ranges = matchRanges(content, terms);
        if (!hit.fragmented || ranges.length) hit.snippet = buildSnippet(snippetSource(content, ranges));
        if (!hit.fragmented && wantExchanges) {
          hit.matchingExchanges = fragmentsWithMatches(content, ranges, MAX_EXCHANGES_PER_SESSION).map((f) =>
            exchange(h.sessionId, f.chunk, f.content),
          );
        }
      }
      return hit;
    });

    if (hits.some((h) => h.fragmented && (wantExchanges || h.snippet === null))) {
      await attachDetails(conn, indexUid, query, filter, hits, wantExchanges);
    }
    conn.reportSuccess();
    hits.sort((a, b) => b.rank - a.rank);
    return {
      total: Math.max(total, hits.length),
      hits: hits.map(({ fragmented: _, snippet, ...h }) => ({ ...h, snippet: snippet ?? '' })),
    };
  } catch (err) {
    if (isIndexNotFound(err)) {
      onIndexMissing?.();
      throw unavailable();
    }
    if (isEngineUnreachable(err)) {
      conn.reportFailure(err);
      throw unavailable();
    }
    throw err;
  }
}

interface DetailedHit extends Omit<SearchHit, 'snippet'> {
  snippet: string | null;
  /** Indexed as a session document plus fragment documents (large session). */
  fragmented: boolean;
}

/**
 * One engine request for what the page query does not give about large sessions (matching
 * exchanges, when asked for, and the snippet of one that matched on its word list): the fragment
 * documents that hold the query words, best first; when no fragment holds them all, words are
 * dropped from the end of the query until some do (`frequency`, which would drop the commonest
 * word first, returns no fragment at all there in Meilisearch 1.21). The engine crops these
 * itself: fragments are small.
 */
async function attachDetails(
  conn: MeiliConnection,
  indexUid: string,
  query: string,
  filter: string,
  hits: DetailedHit[],
  wantExchanges: boolean,
) {
  const asked = hits.filter((h) => h.fragmented && (wantExchanges || h.snippet === null));
  const queries = asked.map((h) => ({
    indexUid,
    q: query,
    filter: `${filter} AND sessionKey = ${meiliString(sessionKeyOf(h.projectId, h.sessionId))}`,
    matchingStrategy: 'last',
    attributesToSearchOn: ['content'],
    attributesToRetrieve: wantExchanges ? ['chunk', 'content'] : ['chunk'],
    ...crop,
    limit: wantExchanges ? MAX_EXCHANGES_PER_SESSION : 1,
  })) as Array<SearchParams & { indexUid: string }>;
  const res = (await conn.searcher().multiSearch({ queries })) as { results: Array<SearchResponse<Doc>> };
  const fallback: DetailedHit[] = [];
  asked.forEach((h, i) => {
    const docs = res.results[i]?.hits ?? [];
    if (h.snippet === null) {
      if (docs[0]) h.snippet = buildSnippet(String(docs[0]._formatted?.content ?? ''));
      else fallback.push(h);
    }
    if (wantExchanges) {
      h.matchingExchanges = [...docs].sort((a, b) => a.chunk - b.chunk).map((d) => exchange(h.sessionId, d.chunk, d.content));
    }
  });
  // Matched on its name or tags only: the snippet is the start of the markdown.
  await Promise.all(
    fallback.map(async (h) => {
      const first = await conn
        .searcher()
        .index<Doc>(indexUid)
        .getDocument(documentIdOf(h.projectId, h.sessionId, 1), { fields: ['content'] })
        .catch(() => null);
      h.snippet = buildSnippet(String(first?.content ?? ''));
    }),
  );
}
