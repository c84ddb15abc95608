import type { SearchParams, SearchResponse } from 'meilisearch';
import { AppError, MESSAGES } from '../../errors';
import { probeAll, type MeiliConnection } from './connection';
import { outlineFor } from '../../domain/document-outline';
import { documentIdOf, sessionDigestOf, sessionKeyOf, type SessionDocument } from '../../domain/search-documents';
import { engineText } from '../../domain/engine-text';
import { distinctMatches, matchingFragments, matchRanges, parseQuery, snippetSource, termsOfPlan } from './highlight';
import { matchesNothing, meiliString, searchFilter } from './filter';
import { coverageOf } from './coverage';
import { federatedPage, federatedQueries, hybridPage, lexicalQueries, wordCounts, type WordCounts } from './planned-page';
import { planQuery, type QueryPlan } from './query-plan';
import { hasEngineCode, isEngineUnreachable, MeiliHttpError, rootCause } from './http-client';
import { countedPage } from './counted-page';
import { mergeByScore } from './merge-by-score';
import { isIndexNotFound } from './index-settings';
import type { KnownCounts, SearchHit, SearchPage, SearchRequest } from './port';
import { buildSnippet } from './snippet';
import { excluding, heldSeen, heldSessions, NOTHING_HELD, recentHoldsNow } from './held-sessions';

/** Matching fragments returned per session (the rest are counted out). */
const MAX_EXCHANGES_PER_SESSION = 20;

type Doc = Pick<
  SessionDocument,
  'projectId' | 'sessionId' | 'chunk' | 'chunks' | 'sessionDigest' | 'content' | 'contentDigest' | 'start' | 'exchange' | 'exchangeBreaks' | 'outline'
>;

const unavailable = () => new AppError('SERVICE_UNAVAILABLE', MESSAGES.unavailable);

const exchange = (sessionId: string, chunk: number, content: string, start: number | null, number: number | null) => ({
  id: `${sessionId}:${chunk}`,
  content,
  orderNumber: chunk,
  start,
  exchange: number,
});

/**
 * What a search's page retrieves of each hit: the stored text, not the engine's crop (see
 * highlight.ts), and the outline of a session indexed whole when its matching exchanges are asked for.
 */
export const pageAttributes = (matchingExchanges: boolean) => [
  'projectId',
  'sessionId',
  'chunk',
  'chunks',
  'content',
  'contentDigest',
  ...(matchingExchanges ? ['outline'] : []),
];

/** Ranks are in (0, 1]: a match never scores 0 to the client. */
const clampRank = (score: number | undefined) => Math.min(1, Math.max(Number(score ?? 0), 1e-6));

type RawHit = SearchResponse<Doc>['hits'][number];

/** One page of the engine's hits and how many sessions match in all. */
interface RawPage {
  total: number;
  hits: RawHit[];
}

/** Where a search runs: both tiers' engines and indexes. */
interface SearchTarget {
  conns: { main: MeiliConnection; recent: MeiliConnection };
  indexes: { main: string; recent: string };
  /** Called when the engine answers but our index is gone (engine data reset): recreate it. */
  onIndexMissing?: () => void;
  /** Called when an engine did not answer (default: probe both, which tells which one is down). */
  onUnreachable?: (err: unknown) => void;
}

/**
 * One page of a user's sessions matching `query`: documents collapsed per session, ranked by
 * how many of the query's words (and which) they hold, no word required but "quoted phrases"
 * (query-plan.ts, planned-page.ts; typo-tolerant, prefix on the last word), owner filter always on.
 *
 * Two indexes (worker.ts): the recent one holds the sessions written since the last compaction,
 * and its copy of a session is the current one; the main index is searched without the sessions
 * the recent one holds that may have a copy there (held-sessions.ts). Both rank with the same
 * settings, so their scores compare: the page is the merge of both by score, and `total` their sum.
 */
export async function searchIndex(target: SearchTarget, request: SearchRequest): Promise<SearchPage> {
  if (!request.semantic) return searchIndexAs(target, request);
  try {
    return await searchIndexAs(target, request);
  } catch (err) {
    // The engine refused the hybrid query (an index without the embedder yet, a vector of the
    // wrong size): answered lexically. An engine that is down fails either way.
    const e = rootCause(err);
    const semantic = await request.semantic;
    if (!semantic || !(e instanceof MeiliHttpError) || e.status < 400 || e.status >= 500 || isIndexNotFound(err) || request.vector) throw err;
    semantic.onRefused?.(err);
    return searchIndexAs(target, { ...request, semantic: undefined });
  }
}

async function searchIndexAs(target: SearchTarget, request: SearchRequest, recheckRecent = true): Promise<SearchPage> {
  const { conns, indexes, onIndexMissing, onUnreachable } = target;
  const { scopes, filters, limit, offset } = request;
  if (matchesNothing(filters)) return { total: 0, hits: [] };
  const filter = searchFilter(scopes, filters);
  const planned = request.allWords ? { q: request.query, words: [], phrases: [] } : planQuery(request.query);
  const plan: QueryPlan = request.wordForms === false ? { ...planned, forms: undefined } : planned;
  const engineQuery = engineText(plan.q); // The query as the engine holds text (engine-text.ts).
  const common: SearchParams = { filter, distinct: 'sessionDigest', matchingStrategy: 'all' };
  const pageParams: SearchParams = {
    ...common,
    showRankingScore: true,
    attributesToRetrieve: pageAttributes(request.matchingExchanges !== false),
  };

  try {
    const client = conns.main.searcher();
    const want = offset + limit;
    // While the recent index held none of the caller's documents at their last search, its counts
    // are left out (all 0) and one request says whether it still holds none, instead of the reads
    // of what it holds (recentHoldsNow); not even that when the caller counted none there a
    // moment ago (knownCounts.recent).
    const several = plan.words.length > 1;
    const known = several ? knownCountsOf(plan, request.knownCounts) : null;
    const countedNone = request.knownCounts?.recent === 0;
    const holdsNow = recheckRecent && !countedNone ? recentHoldsNow(conns.recent, indexes.recent, scopes) : null;
    const recentLeftOut = several && !known && (countedNone || holdsNow !== null);
    const counted = several ? (known ?? (await countsOf(target, plan, filter, !recentLeftOut))) : undefined;
    // The query's vector, asked beside the counts (null: lexical).
    const semantic = (await request.semantic) ?? null;
    const federated = federatedQueries(plan, counted);
    const countTotal = request.countTotal !== false;
    const hybrid = semantic ? lexicalQueries(plan, federated, semantic.ratio) : null;
    const mainPage = (mainFilter: string, from: number, count: number): Promise<RawPage> =>
      hybrid && semantic
        ? hybridPage<Doc>(client, indexes.main, hybrid, semantic, { ...pageParams, filter: mainFilter }, from, count, countTotal)
        : federated
          ? federatedPage<Doc>(client, indexes.main, federated, { ...pageParams, filter: mainFilter }, from, count, countTotal)
          : countedPage(client.index<Doc>(indexes.main), engineQuery, { ...pageParams, filter: mainFilter }, from, count);
    // Asked at the same time as the recent index, for when the user has nothing there that may
    // have a main copy (then it is the main index's answer); otherwise the main index is asked
    // again without the sessions held there
    // (a wasted search for that user, traded for the latency of reading the held sessions first:
    // +0.5-0.7 ms p50 for every user at 10k in one measured run).
    const unexcluded = mainPage(filter, offset, limit);
    unexcluded.catch(() => undefined);
    // Which sessions of the user the recent index holds (their main copies are older): read as
    // documents, not searched for, which costs the engine far less than a search (no query
    // pipeline); not read while it still holds none of theirs (the one request above).
    const anyNow = countedNone ? false : await holdsNow;
    // Some of the caller's documents are there now (an upload since their last search): the
    // counts left theirs out, so the search is asked again with them (and what is held read).
    if (recentLeftOut && anyNow) return searchIndexAs(target, request, false);
    const held = anyNow === false ? NOTHING_HELD : await heldSessions(conns.recent, indexes.recent, scopes, anyNow === true);
    heldSeen(conns.recent, indexes.recent, scopes, held.any);

    let total: number;
    let raw: RawHit[];
    let fromRecent = new Set<RawHit>();
    if (!held.any) {
      ({ total, hits: raw } = await unexcluded);
    } else {
      // The recent index's matching sessions, enough to fill the page, and the main index
      // without the sessions held there. At offset 0 both are asked at once; further on, the
      // main index is asked from where the recent hits leave it (its first `offset -
      // recentHits.length` hits are ranked before the page whatever the recent ones score).
      const recentPage = async (): Promise<RawPage> => {
        if (hybrid && semantic) return hybridPage<Doc>(conns.recent.searcher(), indexes.recent, hybrid, semantic, pageParams, 0, want, countTotal);
        if (federated) return federatedPage<Doc>(conns.recent.searcher(), indexes.recent, federated, pageParams, 0, want, countTotal);
        const res = await conns.recent
          .searcher()
          .index<Doc>(indexes.recent)
          .search(engineQuery, { ...pageParams, hitsPerPage: want, page: 1 });
        return { total: res.totalHits ?? 0, hits: res.hits };
      };
      const mainFilter = held.shadowing.length ? excluding(filter, held.shadowing) : filter;
      let recent: RawPage;
      let page: RawPage;
      let from = 0;
      if (offset === 0) {
        // Nothing to leave out: the main index's page asked first is the one (offset 0, `want` = `limit`).
        const asked = [recentPage(), held.shadowing.length ? mainPage(mainFilter, 0, want) : unexcluded] as const;
        asked[1].catch(() => undefined);
        recent = await asked[0];
        page = await asked[1];
      } else {
        recent = await recentPage();
        from = Math.max(0, offset - recent.hits.length);
        page = await mainPage(mainFilter, from, want - from);
      }
      fromRecent = new Set(recent.hits);
      total = recent.total + page.total;
      // (A hybrid page's total counts its lexical hits only: its semantic hits are merged all the same.)
      raw = recent.total === 0 && recent.hits.length === 0 ? page.hits : mergeByScore(recent.hits, page.hits, from, offset, limit);
    }
    // A compaction between the engine's reads can show a session on both sides once: keep one.
    const seen = new Set<string>();
    raw = raw.filter((h) => {
      const key = sessionKeyOf(h.projectId, h.sessionId);
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    });
    // The page's sessions are known: the caller's re-check can start while they are marked.
    request.onRanked?.(raw);

    const wantExchanges = request.matchingExchanges !== false;
    const terms = termsOfPlan(plan);
    const coverage = coverageOf(plan, counted);
    const hits: DetailedHit[] = raw.map((h) => {
      const hit: DetailedHit = {
        projectId: h.projectId,
        sessionId: h.sessionId,
        contentDigest: h.contentDigest,
        rank: clampRank(h._rankingScore),
        snippet: null,
        matchingExchanges: [],
        fragmented: h.chunks > 0 || h.chunk > 0,
        tier: fromRecent.has(h) ? 'recent' : 'main',
      };
      const content = engineText(String(h.content ?? ''));
      // A session indexed whole (or the fragment of a large one that matched): marked here. A
      // large session matched on its word list has no text: its fragments give the snippet.
      if (!hit.fragmented || content) {
        const ranges = matchRanges(content, terms);
        if (coverage) hit.rank = Math.max(hit.rank, coverage(content, ranges));
        if (!hit.fragmented || ranges.length) hit.snippet = buildSnippet(snippetSource(content, ranges));
        if (!hit.fragmented && wantExchanges && ranges.length) {
          // The text is at most 64 KB here, the whole markdown of the version the hit is checked against.
          const found = matchingFragments(content, outlineFor(h.outline, content), ranges, MAX_EXCHANGES_PER_SESSION);
          hit.matchingExchanges = bestFirst(found, (f) => distinctMatches(f.content, terms)).map((f) => ({
            ...exchange(h.sessionId, f.chunk, f.content, f.byteStart, f.exchange),
            title: f.title,
          }));
        }
      }
      return hit;
    });

    await Promise.all(
      (['main', 'recent'] as const).map((tier) => {
        const ofTier = hits.filter((h) => h.tier === tier);
        if (!ofTier.some((h) => h.fragmented && (wantExchanges || h.snippet === null))) return Promise.resolve();
        return attachDetails({ conn: conns[tier], indexUid: indexes[tier], plan, engineQuery, terms, filter, hits: ofTier, wantExchanges });
      }),
    );
    conns.main.reportSuccess();
    conns.recent.reportSuccess();
    hits.sort((a, b) => b.rank - a.rank);
    return {
      total: Math.max(total, hits.length),
      hits: hits.map(({ fragmented: _, tier: __, snippet, ...h }) => ({ ...h, snippet: snippet ?? '' })),
    };
  } catch (err) {
    if (isIndexNotFound(err)) {
      onIndexMissing?.();
      throw unavailable();
    }
    if (isEngineUnreachable(err)) {
      if (onUnreachable) onUnreachable(err);
      else probeAll([conns.main, conns.recent]);
      throw unavailable();
    }
    throw err;
  }
}

/**
 * The item that best answers the query (most distinct words; the first of equals) first, then the
 * others in their order: a result leads with the exchange that answers it.
 */
function bestFirst<T>(items: T[], score: (item: T) => number): T[] {
  if (items.length < 2) return items;
  let best = 0;
  let top = score(items[0]);
  for (let i = 1; i < items.length; i++) {
    const s = score(items[i]);
    if (s > top) [best, top] = [i, s];
  }
  return [items[best], ...items.slice(0, best), ...items.slice(best + 1)];
}

/**
 * The plan's counts from counts the caller already has (every word as written; no forms counts,
 * so a word's forms query weighs by the rarity of the word itself), or null when they do not name
 * every word or the query has phrases (a word's count is then of the word with the phrases).
 */
function knownCountsOf(plan: QueryPlan, known: KnownCounts | undefined): WordCounts | null {
  if (!known || plan.phrases.length > 0 || !plan.words.every((w) => known.holding.has(w))) return null;
  return { documents: known.documents, holding: plan.words.map((w) => known.holding.get(w)!) };
}

/** How many documents of both indexes (`withRecent` false: of the main one) among `filter`'s hold each word of the plan. */
async function countsOf(target: SearchTarget, plan: QueryPlan, filter: string, withRecent: boolean): Promise<WordCounts> {
  const { conns, indexes } = target;
  const mainCounts = wordCounts(conns.main.searcher(), indexes.main, plan, filter);
  if (!withRecent) return mainCounts;
  const [main, recent] = await Promise.all([mainCounts, wordCounts(conns.recent.searcher(), indexes.recent, plan, filter)]);
  const sum = (a: number[], b: number[]) => a.map((n, i) => n + b[i]);
  return {
    documents: main.documents + recent.documents,
    holding: sum(main.holding, recent.holding),
    // Without these, a word held only in other forms (`retries` where the text says `retrying`)
    // would count as held nowhere and be left out of the query.
    ...(main.holdingForms && recent.holdingForms ? { holdingForms: sum(main.holdingForms, recent.holdingForms) } : {}),
  };
}

/**
 * The reader's exchange holding a fragment's first match: the exchange it begins in, plus the
 * exchanges that begin inside it before that match. Null for a fragment indexed before exchange
 * numbers were recorded (a reindex adds them).
 */
function exchangeOfFragment(d: Pick<Doc, 'content' | 'exchange' | 'exchangeBreaks'>, terms: ReturnType<typeof parseQuery>): number | null {
  if (typeof d.exchange !== 'number') return null;
  const first = matchRanges(String(d.content ?? ''), terms)[0];
  const at = first ? first[0] : 0;
  return d.exchange + (d.exchangeBreaks ?? []).filter((b) => b <= at).length;
}

interface DetailedHit extends Omit<SearchHit, 'snippet'> {
  snippet: string | null;
  /** Indexed as a session document plus fragment documents (large session). */
  fragmented: boolean;
  /** The index the hit came from (its fragments are there). */
  tier: 'main' | 'recent';
}

/**
 * One engine request for what the page query does not give about large sessions (matching
 * exchanges, when asked for, and the snippet of one that matched on its word list): the fragment
 * documents that hold the query words (in any form, when the query has forms: its forms query),
 * best first; when no fragment holds them all, words are dropped from the end of the query until
 * some do (`frequency`, which would drop the commonest word first, returns no fragment at all there
 * in Meilisearch 1.21). Fragments are small: they are marked here, as whole sessions are.
 */
async function attachDetails(a: {
  conn: MeiliConnection;
  indexUid: string;
  plan: QueryPlan;
  engineQuery: string;
  terms: ReturnType<typeof parseQuery>;
  filter: string;
  hits: DetailedHit[];
  wantExchanges: boolean;
}) {
  const { conn, indexUid, plan, engineQuery, terms, filter, hits, wantExchanges } = a;
  const asked = hits.filter((h) => h.fragmented && (wantExchanges || h.snippet === null));
  const formsQuery = terms.forms.size > 0 ? federatedQueries(plan)?.find((q) => q.forms) : undefined;
  const queries = asked.map((h) => ({
    indexUid,
    q: formsQuery?.q ?? engineQuery,
    filter: `${filter} AND sessionDigest = ${meiliString(sessionDigestOf(h.projectId, h.sessionId))}`,
    matchingStrategy: 'last',
    // Not the name or tags, which every fragment carries; the forms query's marked stems are in `forms` only.
    attributesToSearchOn: formsQuery ? ['content', 'forms'] : ['content'],
    attributesToRetrieve: ['chunk', 'content', 'start', 'exchange', 'exchangeBreaks'],
    limit: wantExchanges ? MAX_EXCHANGES_PER_SESSION : 1,
  })) as Array<SearchParams & { indexUid: string }>;
  let res: { results: Array<SearchResponse<Doc>> };
  try {
    res = await conn.searcher().multiSearch({ queries });
  } catch (err) {
    if (!(formsQuery && hasEngineCode(err, 'invalid_search_attributes_to_search_on'))) throw err;
    // No document of the index has `forms` yet (indexed before forms existed): the words as written.
    const exact = queries.map((q) => ({ ...q, q: engineQuery, attributesToSearchOn: ['content'] }));
    res = await conn.searcher().multiSearch({ queries: exact });
  }
  const fallback: DetailedHit[] = [];
  asked.forEach((h, i) => {
    const docs = (res.results[i]?.hits ?? []).map((d) => ({ ...d, content: engineText(String(d.content ?? '')) }));
    if (h.snippet === null) {
      if (docs[0]) {
        const content = String(docs[0].content ?? '');
        h.snippet = buildSnippet(snippetSource(content, matchRanges(content, terms)));
      } else fallback.push(h);
    }
    if (wantExchanges) {
      // The engine ranks the fragments holding the most query words first: that one leads.
      h.matchingExchanges = [...docs.slice(0, 1), ...docs.slice(1).sort((a, b) => a.chunk - b.chunk)].map((d) =>
        exchange(h.sessionId, d.chunk, d.content, typeof d.start === 'number' ? d.start : null, exchangeOfFragment(d, terms)),
      );
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
      h.snippet = buildSnippet(engineText(String(first?.content ?? '')));
    }),
  );
}
