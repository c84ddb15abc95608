/**
 * How many of the documents of some owner scopes hold each of a few words: the document
 * frequencies that weigh a session's words when its related sessions are looked for without an
 * embedder (src/domain/distinctive-terms.ts). Multi-searches on one index, every query asking for
 * no hits (the engine's estimated count, cheap): the first counts every document of the scopes,
 * the others each word as written (quoted: no typo or prefix variants).
 */
import type { SearchResponse } from 'meilisearch';
import type { TermCounts } from '../../domain/distinctive-terms';
import type { MeiliConnection } from './connection';
import { scopeFilter } from './filter';

/**
 * Requests the queries are split into, sent at once: the engine answers the queries of one
 * multi-search one after another, on one thread, and separate requests on several.
 */
const COUNT_REQUESTS = 3;

export async function termCounts(
  conn: MeiliConnection,
  indexUid: string,
  scopes: readonly string[],
  terms: readonly string[],
  requests = COUNT_REQUESTS,
): Promise<TermCounts> {
  const filter = scopeFilter(scopes);
  // Terms are letters and digits only (distinctive-terms.ts): nothing in them can end the quote.
  const queries = ['', ...terms.map((t) => `"${t}"`)].map((q) => ({ indexUid, q, filter, limit: 0, attributesToRetrieve: [] }));
  const size = Math.ceil(queries.length / Math.max(1, requests));
  const parts = Array.from({ length: Math.ceil(queries.length / size) }, (_, i) => queries.slice(i * size, (i + 1) * size));
  const answers = await Promise.all(parts.map((part) => conn.searcher().multiSearch({ queries: part }) as Promise<{ results: SearchResponse[] }>));
  const results = answers.flatMap((a) => a.results);
  const count = (i: number) => results[i]?.estimatedTotalHits ?? 0;
  return { documents: count(0), counts: terms.map((_, i) => count(i + 1)) };
}

/** Several engines' counts added up (each holds other scopes' documents). */
export function sumCounts(parts: TermCounts[], terms: number): TermCounts {
  return {
    documents: parts.reduce((n, p) => n + p.documents, 0),
    counts: Array.from({ length: terms }, (_, i) => parts.reduce((n, p) => n + (p.counts[i] ?? 0), 0)),
  };
}
