/**
 * How many of the documents of some owner scopes hold each of a few words: the document
 * frequencies that weigh a session's words when its related sessions are looked for without an
 * embedder (src/domain/distinctive-terms.ts). One multi-search on one index, every query
 * asking for no hits (the engine's estimated count, cheap): the first counts every document of the
 * scopes, the others each word as written (quoted: no typo or prefix variants).
 */
import type { SearchResponse } from 'meilisearch';
import type { TermCounts } from '../../domain/distinctive-terms';
import type { MeiliConnection } from './connection';
import { scopeFilter } from './filter';

export async function termCounts(conn: MeiliConnection, indexUid: string, scopes: readonly string[], terms: readonly string[]): Promise<TermCounts> {
  const filter = scopeFilter(scopes);
  // Terms are letters and digits only (distinctive-terms.ts): nothing in them can end the quote.
  const queries = ['', ...terms.map((t) => `"${t}"`)].map((q) => ({ indexUid, q, filter, limit: 0, attributesToRetrieve: [] }));
  const res = (await conn.searcher().multiSearch({ queries })) as { results: SearchResponse[] };
  const count = (i: number) => res.results[i]?.estimatedTotalHits ?? 0;
  return { documents: count(0), counts: terms.map((_, i) => count(i + 1)) };
}

/** Several engines' counts added up (each holds other scopes' documents). */
export function sumCounts(parts: TermCounts[], terms: number): TermCounts {
  return {
    documents: parts.reduce((n, p) => n + p.documents, 0),
    counts: Array.from({ length: terms }, (_, i) => parts.reduce((n, p) => n + (p.counts[i] ?? 0), 0)),
  };
}
