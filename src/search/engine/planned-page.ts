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
 * Each of these has a forms counterpart (word-forms.ts): the words' stems (an identifier's parts'
 * stems), marked, which only the `forms` attribute holds, weighted down by FORMS_WEIGHT, so that
 * `retries` finds `retrying` below the sessions holding `retries` itself.
 * A query of phrases only is asked as it is, every part required.
 */
import type { Meilisearch, SearchParams, SearchResponse } from 'meilisearch';
import { ENGINE_WORDS, type QueryPlan } from './query-plan';
import { markedForm } from '../../domain/word-forms';
import { engineText } from '../../domain/engine-text';
import { MeiliHttpError, rootCause } from './http-client';
import { EMBEDDER } from '../../domain/search-documents';
import { engineCounts, largeSessionsCount } from './count-cache';
import { INDEX_SETTINGS } from './index-settings';

/** Weight of the rarest word's own query against the whole query's; commoner words weigh less. */
const WORD_WEIGHT = 0.5;
/**
 * Words of a query past which each word's own query weighs less, in proportion (WORD_WEIGHT × 3/n
 * for n words): a session holding one word of a long question holds less of what was asked than
 * one holding one word of two. On the relevance fixture (all questions with the same weights),
 * 3 raised recall@3 from 0.947 to 0.957 and MRR from 0.878 to 0.897; 2, 4 and 5 gained less, and
 * a square root of the ratio nothing.
 */
export const FULL_WEIGHT_WORDS = 3;
/** Weight of a forms query against its exact counterpart. */
export const FORMS_WEIGHT = 0.8;

/** One query of a federated search. */
interface PlannedQuery {
  q: string;
  matchingStrategy: 'last' | 'all';
  weight: number;
  /** A forms query (its words are marked stems). */
  forms: boolean;
}

/** A plan's phrases as the engine gets them: quoted, as the engine holds text (engine-text.ts). */
const quotedPhrases = (plan: QueryPlan) => plan.phrases.map((p) => `"${engineText(p)}"`);

/** A forms query's words, marked (a trailing space: a stem is no prefix of what is typed). */
const formsQuery = (stems: string[]) => `${stems.map(markedForm).join(' ')} `;

/**
 * What the forms query asks for a plan's word i. Also for a word that is its own stem: the text's
 * other forms of it (`connection` for `connect`) and identifiers' parts are only in `forms`.
 */
const otherForms = (plan: QueryPlan, i: number): string[] | null => {
  const f = plan.forms?.[i];
  return f && f.length > 0 ? f : null;
};

interface PlannedPage<D> {
  total: number;
  hits: SearchResponse<D>['hits'];
}

/** How many documents hold each word of a plan (with its phrases), and how many there are, among `filter`'s. */
export interface WordCounts {
  documents: number;
  /** Per plan word, in plan order: documents holding it as written. */
  holding: number[];
  /** Per plan word: documents holding it in any form. */
  holdingForms?: number[];
}

/**
 * Counts, among `filter`'s documents, of those holding each word of the plan (and its forms), in
 * one request (`requests`: split into that many, sent at once; bench/federated-work.ts compares);
 * counts asked a moment ago are not asked again (count-cache.ts), and with all of them remembered
 * no request is made. Two requests were faster only while every query cost the engine ~3 ms of
 * tokenizer (engine-text.ts): at 10k, 17.7 → 13.8 ms p50 then, 2.57 → 2.35 ms since.
 */
export async function wordCounts(client: Meilisearch, indexUid: string, plan: QueryPlan, filter: string, requests = 1): Promise<WordCounts> {
  const phrases = quotedPhrases(plan);
  const count = (q: string) => ({ indexUid, q, filter });
  const forms = plan.words.map((_, i) => otherForms(plan, i));
  const queries = [
    count(''),
    ...plan.words.map((w) => count([...phrases, w].join(' '))),
    ...forms.flatMap((f) => (f ? [count([...phrases, formsQuery(f)].join(' '))] : [])),
  ];
  const counts = await engineCounts(client, queries, requests);
  const holding = counts.slice(1, 1 + plan.words.length);
  let next = 1 + plan.words.length;
  const holdingForms = forms.map((f, i) => (f ? Math.max(holding[i], counts[next++]) : holding[i]));
  return { documents: counts[0], holding, holdingForms };
}

/** Inverse document frequency (BM25's, never negative). */
const idf = (documents: number, holding: number) => Math.log(1 + (documents - holding + 0.5) / (holding + 0.5));

/**
 * Plan word i's weight by rarity: the idf of the documents holding it as written, or, when none
 * do, of those holding it in other forms; 0 when no document holds it in any form. The federated
 * queries (below) and a long question's page ranking (coverage.ts) both weigh words by it.
 */
export function wordWeight(counts: WordCounts, i: number): number {
  const holding = counts.holding[i];
  const family = counts.holdingForms?.[i] ?? holding;
  return family > 0 ? idf(counts.documents, holding > 0 ? holding : family) : 0;
}

/**
 * The queries of a plan (null: asked as one query, every part required): words no document holds
 * in any form are left out; the whole query lists the rarest words first (so that `last` drops
 * the commonest first), and each word's own query weighs by its rarity (of all its forms); each
 * has its forms counterpart when some word has other forms.
 */
export function federatedQueries(plan: QueryPlan, counts?: WordCounts): PlannedQuery[] | null {
  if (plan.words.length === 0) return null;
  const phrases = quotedPhrases(plan);
  let words = plan.words.map((w, i) => ({
    w,
    forms: otherForms(plan, i),
    weight: 1,
    rarity: counts ? wordWeight(counts, i) : 0,
    holding: counts?.holding[i] ?? 1,
    family: counts?.holdingForms?.[i] ?? counts?.holding[i] ?? 1,
  }));
  if (plan.words.length === 1 && !words[0].forms) return null;
  if (counts) {
    words = words.filter((x) => x.family > 0);
    if (words.length === 0) return null;
    const top = Math.max(...words.map((x) => x.rarity));
    for (const x of words) x.weight = top > 0 ? x.rarity / top : 1;
    // Rarest first (idf falls as the documents holding a word rise; equal counts, equal idf).
    words.sort((a, b) => b.rarity - a.rarity);
  }
  // Room for the forms query's words (an identifier's parts may be more than one word).
  const room = Math.max(1, ENGINE_WORDS - plan.phrases.reduce((n, p) => n + p.split(/\s+/).length, 0));
  const allForms = [...new Set(words.flatMap((x) => x.forms ?? [x.w]))].slice(0, room);
  const exact = (q: string[], matchingStrategy: 'last' | 'all', weight: number): PlannedQuery => ({
    q: [...phrases, ...q].join(' '),
    matchingStrategy,
    weight,
    forms: false,
  });
  const inForms = (q: string[], matchingStrategy: 'last' | 'all', weight: number): PlannedQuery => ({
    q: [...phrases, formsQuery(q)].join(' '),
    matchingStrategy,
    weight: weight * FORMS_WEIGHT,
    forms: true,
  });
  const anyForms = words.some((x) => x.forms);
  const whole = words.filter((x) => x.holding > 0 || !counts).map((x) => x.w);
  const queries: PlannedQuery[] = [];
  if (whole.length > 0) queries.push(exact(whole, 'last', 1));
  // One word: all of its parts (an identifier's), as its exact query requires the whole word.
  if (anyForms) queries.push(inForms(allForms, words.length > 1 ? 'last' : 'all', 1));
  if (words.length > 1) {
    // The first word's own query finds nothing a whole query of at most two words does not:
    // `last` keeps the first word, and a session holding only it scores there as its own query
    // would score it (half the words matched, or the same query). Left out, a two-word search
    // asks the engine 4 queries, not 6; the relevance fixture is unchanged. (Of more words, a
    // session holding only the first scores lower in the whole query than in its own query:
    // the fixture lost 6 points when those were left out too.) Not when that word is the last
    // one typed: only the last word of a query matches as a prefix (search as you type), and
    // in the whole query it is no longer last.
    const typedLast = plan.words[plan.words.length - 1];
    const exactCovered = whole.length === 1 || (whole.length === 2 && whole[0] !== typedLast) ? whole[0] : null;
    const formsCovered = words.length === 2 && words[0].forms?.length === 1 && allForms[0] === words[0].forms[0] ? words[0] : null;
    // A word's own forms query only when its forms are held by more documents than the word as
    // written: otherwise it finds the sessions its exact query finds, ranked lower (a document
    // holding the word holds its stem). On the bench corpus at 10k that left out 0.9 of a plan's
    // 4.3 queries and a third of the engine's time (bench/federated-work.ts); the relevance
    // fixture is unchanged. (The whole forms query stays: left out too, it cost 1 point.) Without
    // forms counts, every word keeps it.
    const formsAdd = (x: (typeof words)[number]) => !counts?.holdingForms || x.family > x.holding;
    const share = WORD_WEIGHT * Math.min(1, FULL_WEIGHT_WORDS / words.length);
    for (const x of words) {
      if ((x.holding > 0 || !counts) && x.w !== exactCovered) queries.push(exact([x.w], 'all', share * x.weight));
      if (x.forms && x !== formsCovered && formsAdd(x)) queries.push(inForms(x.forms, 'all', share * x.weight));
    }
  }
  return queries;
}

/** A planned query as one query of a multi-search on `indexUid`, with the page's filter and distinct, weighted. */
const plannedRequest = (indexUid: string, q: PlannedQuery, { filter, distinct }: SearchParams, weight = q.weight) => ({
  indexUid,
  q: q.q,
  matchingStrategy: q.matchingStrategy,
  filter,
  distinct,
  federationOptions: { weight },
});

/** The documents not counted by the `whole` facet: large sessions' and those indexed before `whole` existed. */
export const LARGE = 'NOT whole = true';
/** Large sessions counted per request (a user's large sessions matching any word); past it, `total` says at least this many. */
const LARGE_COUNTED = 1000;

/** federatedPage's plan as multi-search queries with the page's filter (and `extra`, when given) and distinct. */
const plannedRequests = (indexUid: string, queries: PlannedQuery[], { filter, distinct }: SearchParams, extra: string | null) =>
  queries.map((q) => plannedRequest(indexUid, q, { filter: extra ? `(${String(filter)}) AND ${extra}` : filter, distinct }));

/** The request of federatedPage's page: hits [from, from + count), with the `whole` facet when `facets`. */
export const federatedPageRequest = (indexUid: string, queries: PlannedQuery[], params: SearchParams, from: number, count: number, facets: boolean) => ({
  federation: { limit: count, offset: from, ...(facets ? { facetsByIndex: { [indexUid]: ['whole'] } } : {}) },
  queries: plannedRequests(indexUid, queries, params, null).map((q) => ({
    ...q,
    attributesToRetrieve: params.attributesToRetrieve,
    showRankingScore: params.showRankingScore,
  })),
});

/**
 * The request counting the sessions among the documents matching a plan and `extra`: one
 * federated search without hits, the documents' `sessionDigest` values as a facet (the engine
 * computes it over every document any query matched). It lists at most FACET_VALUES values.
 */
export const sessionsFacetRequest = (indexUid: string, queries: PlannedQuery[], params: SearchParams, extra: string) => ({
  federation: { limit: 0, offset: 0, facetsByIndex: { [indexUid]: ['sessionDigest'] } },
  queries: plannedRequests(indexUid, queries, { filter: params.filter }, extra),
});
/** Values a facet lists at most (the index's `maxValuesPerFacet`): a facet holding this many may have left some out. */
const FACET_VALUES = INDEX_SETTINGS.faceting.maxValuesPerFacet;

/** The request listing the sessions among the documents matching a plan and `extra` (null: all): each query's, distinct. */
export const sessionsListingRequest = (indexUid: string, queries: PlannedQuery[], params: SearchParams, extra: string | null) => ({
  queries: plannedRequests(indexUid, queries, params, extra).map(({ federationOptions: _, ...q }) => ({
    ...q,
    attributesToRetrieve: ['sessionDigest'],
    limit: LARGE_COUNTED,
  })),
});

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
 * sessions are counted by one more request (a facet of their documents' `sessionDigest`; listed,
 * distinct per query and united here, when the facet is full): sent with the page while this
 * filter's searches find large sessions (count-cache.ts, largeSessionsCount), else after it.
 * `params` are the page's (filter, distinct, attributes, showRankingScore). `countTotal` false:
 * the page only, its `total` the engine's estimate of matching documents (no facet, no listing).
 */
export async function federatedPage<D extends Record<string, unknown>>(
  client: Meilisearch,
  indexUid: string,
  queries: PlannedQuery[],
  params: SearchParams,
  from: number,
  count: number,
  countTotal = true,
): Promise<PlannedPage<D>> {
  const page = (facets: boolean) =>
    client.multiSearch(federatedPageRequest(indexUid, queries, params, from, count, facets) as never) as unknown as Promise<Federated<D>>;
  // Sessions among the documents matching `extra` (null: all), listed (distinct per query, united).
  const sessionsListed = async (extra: string | null) => {
    const listed = (await client.multiSearch(sessionsListingRequest(indexUid, queries, params, extra) as never)) as unknown as {
      results: Array<{ hits: Array<{ sessionDigest: string }> }>;
    };
    return new Set(listed.results.flatMap((r) => r.hits.map((h) => h.sessionDigest))).size;
  };
  // The large sessions matched, counted by their facet (no ranking, no documents read); listed
  // when the facet is full.
  const largeCounted = async () => {
    const res = (await client.multiSearch(sessionsFacetRequest(indexUid, queries, params, LARGE) as never)) as unknown as {
      facetsByIndex?: Record<string, { distribution?: { sessionDigest?: Record<string, number> } }>;
    };
    const n = Object.keys(res.facetsByIndex?.[indexUid]?.distribution?.sessionDigest ?? {}).length;
    return n < FACET_VALUES ? n : sessionsListed(LARGE);
  };
  // Each hit's `_rankingScore` its weighted score.
  const scored = (p: Federated<D>) => p.hits.map((h) => ({ ...h, _rankingScore: h._federation?.weightedRankingScore ?? h._rankingScore }));
  if (!countTotal) {
    const p = await page(false);
    return { total: p.estimatedTotalHits ?? p.hits.length, hits: scored(p) };
  }
  const large = largeSessionsCount(indexUid, String(params.filter), largeCounted);
  let res: Federated<D>;
  try {
    res = await page(true);
  } catch (err) {
    const e = rootCause(err);
    if (!(e instanceof MeiliHttpError && /facet/i.test(`${e.code ?? ''}`))) throw err;
    // `whole` is not filterable (yet: settings are applied at start): every session listed.
    const [p, total] = await Promise.all([page(false), sessionsListed(null)]);
    return { total, hits: scored(p) };
  }
  const hits = scored(res);
  const byWhole = res.facetsByIndex?.[indexUid]?.distribution?.whole;
  if (!byWhole) return { total: res.estimatedTotalHits ?? hits.length, hits };
  const total = byWhole.true ?? 0;
  return { total: uncountedMatched(res, indexUid) ? total + (await large.needed()) : total, hits };
}

/**
 * Whether a federated page asked with the `whole` facet matched documents the facet's `true`
 * does not count: large sessions' (`whole = false`) or documents indexed before `whole` existed
 * (neither; one per session too). Those sessions are listed to be counted.
 */
export function uncountedMatched(res: Pick<Federated<unknown>, 'estimatedTotalHits' | 'facetsByIndex'>, indexUid: string): boolean {
  const byWhole = res.facetsByIndex?.[indexUid]?.distribution?.whole ?? {};
  return (byWhole.false ?? 0) > 0 || (res.estimatedTotalHits ?? 0) > (byWhole.true ?? 0);
}

/** A search's query vector and how much the semantic results weigh against the lexical ones (0 to 1). */
interface SemanticQuery {
  vector: number[];
  ratio: number;
}

/**
 * Hits [from, from + count) of `indexUid` for a hybrid search: the lexical queries of a plan (as
 * federatedPage asks them) and one vector query (the engine's semantic search, `semanticRatio: 1`),
 * in one federated search whose weights split the ranking between both (`ratio` 0.5: equal
 * weights). `total` is the lexical one (sessions holding a query word, counted as federatedPage
 * counts them, in a request asked at the same time; 0 with `countTotal` false): a vector query
 * matches every document that has a vector, so its hits are ranked but not counted.
 */
export async function hybridPage<D extends Record<string, unknown>>(
  client: Meilisearch,
  indexUid: string,
  queries: PlannedQuery[],
  semantic: SemanticQuery,
  params: SearchParams,
  from: number,
  count: number,
  countTotal = true,
): Promise<PlannedPage<D>> {
  const { filter, distinct, attributesToRetrieve, showRankingScore } = params;
  const lexicalWeight = 2 * (1 - semantic.ratio);
  const lexical = lexicalWeight > 0 ? queries : [];
  const page = client.multiSearch({
    federation: { limit: count, offset: from },
    queries: [
      ...lexical.map((q) => ({ ...plannedRequest(indexUid, q, params, q.weight * lexicalWeight), attributesToRetrieve, showRankingScore })),
      {
        indexUid,
        q: '',
        vector: semantic.vector,
        hybrid: { embedder: EMBEDDER, semanticRatio: 1 },
        filter,
        distinct,
        attributesToRetrieve,
        showRankingScore,
        federationOptions: { weight: 2 * semantic.ratio },
      },
    ],
  } as never) as unknown as Promise<Federated<D>>;
  page.catch(() => undefined);
  const total = countTotal && queries.length > 0 ? (await federatedPage<D>(client, indexUid, queries, params, 0, 0)).total : 0;
  const res = await page;
  return { total, hits: res.hits.map((h) => ({ ...h, _rankingScore: h._federation?.weightedRankingScore ?? h._rankingScore })) };
}

/** The lexical queries of a hybrid search: the plan's federated queries, or its one query; none for a search by vector alone. */
export function lexicalQueries(plan: QueryPlan, federated: PlannedQuery[] | null, ratio: number): PlannedQuery[] {
  if (ratio >= 1 || !plan.q) return [];
  return federated ?? [{ q: engineText(plan.q), matchingStrategy: 'all', weight: 1, forms: false }];
}
