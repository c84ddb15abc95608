import type { SearchParams, SearchResponse } from 'meilisearch';
import { AppError, MESSAGES } from '../errors';
import type { SessionFilters } from '../services/filters';
import type { MeiliConnection } from './connection';
import { sessionKeyOf, type SessionDocument } from './documents';
import { matchesNothing, meiliString, searchFilter } from './filter';
import { isEngineUnreachable } from './http-client';
import { isIndexNotFound } from './index-settings';
import type { SearchHit, SearchOptions, SearchPage } from './port';
import { buildSnippet, MARKERS } from './snippet';

/** Words Meilisearch keeps around the match before we trim to 240 characters. */
const CROP_WORDS = 48;
/** Matching fragments returned per session (the rest are counted out). */
export const MAX_EXCHANGES_PER_SESSION = 20;

type Doc = Pick<SessionDocument, 'projectId' | 'sessionId' | 'chunk' | 'sessionKey' | 'content'>;

const unavailable = () => new AppError('SERVICE_UNAVAILABLE', MESSAGES.unavailable);

/** Ranks are in (0, 1]: a match never scores 0 to the client. */
const clampRank = (score: number | undefined) => Math.min(1, Math.max(Number(score ?? 0), 1e-6));

/**
 * One page of a user's sessions matching `query`: chunks collapsed per session, every query word
 * required (typo-tolerant, prefix on the last word, "quoted phrases" exact), owner filter always on.
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
    attributesToRetrieve: ['projectId', 'sessionId', 'chunk'],
    attributesToCrop: ['content'],
    cropLength: CROP_WORDS,
    cropMarker: MARKERS.crop,
    attributesToHighlight: ['content'],
    highlightPreTag: MARKERS.pre,
    highlightPostTag: MARKERS.post,
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

    const hits: SearchHit[] = raw.map((h) => ({
      projectId: h.projectId,
      sessionId: h.sessionId,
      rank: clampRank(h._rankingScore),
      snippet: buildSnippet(String(h._formatted?.content ?? '')),
      matchingExchanges: [],
    }));

    if (options.matchingExchanges !== false && hits.length > 0) {
      await attachExchanges(conn, indexUid, query, filter, hits);
    }
    conn.reportSuccess();
    hits.sort((a, b) => b.rank - a.rank);
    return { total: Math.max(total, hits.length), hits };
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

/**
 * The fragments of each session whose text matches every query word, in order. Names and tags
 * are indexed with every fragment, so only the text is searched here.
 */
async function attachExchanges(conn: MeiliConnection, indexUid: string, query: string, filter: string, hits: SearchHit[]) {
  const keys = hits.map((h) => sessionKeyOf(h.projectId, h.sessionId));
  const res = await conn
    .searcher()
    .index<Doc>(indexUid)
    .search(query, {
      filter: `${filter} AND sessionKey IN [${keys.map(meiliString).join(', ')}]`,
      matchingStrategy: 'all',
      attributesToSearchOn: ['content'],
      attributesToRetrieve: ['sessionKey', 'sessionId', 'chunk', 'content'],
      limit: Math.min(1000, hits.length * MAX_EXCHANGES_PER_SESSION),
    });
  const byKey = new Map<string, Doc[]>();
  for (const d of res.hits) {
    const list = byKey.get(d.sessionKey) ?? [];
    if (list.length < MAX_EXCHANGES_PER_SESSION) list.push(d);
    byKey.set(d.sessionKey, list);
  }
  hits.forEach((h, i) => {
    const docs = (byKey.get(keys[i]) ?? []).sort((a, b) => a.chunk - b.chunk);
    h.matchingExchanges = docs.map((d) => ({ id: `${d.sessionId}:${d.chunk}`, content: d.content, orderNumber: d.chunk }));
  });
}
