/**
 * How many of the documents of some owner scopes hold each of a few words: the document
 * frequencies that weigh a session's words when its related sessions are looked for without an
 * embedder (src/domain/distinctive-terms.ts). Multi-searches on one index, every query asking for
 * no hits (the engine's estimated count): the first counts every document of the scopes, the
 * others each word as written (quoted: no typo or prefix variants); counts asked a moment ago are
 * remembered (count-cache.ts).
 */
import type { SearchResponse } from 'meilisearch';
import type { TermCounts } from '../../domain/distinctive-terms';
import type { MeiliConnection } from './connection';
import { countsThrough } from './count-cache';
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
  const client = conn.searcher();
  // Terms are letters and digits only (distinctive-terms.ts): nothing in them can end the quote.
  const queries = ['', ...terms.map((t) => `"${t}"`)].map((q) => ({ indexUid, q, filter }));
  // Counts asked a moment ago are not asked again (count-cache.ts).
  const counts = await countsThrough(client.config.host, queries, async (missing) => {
    const asked = missing.map((x) => ({ ...x, limit: 0, attributesToRetrieve: [] }));
    const size = Math.ceil(asked.length / Math.max(1, requests));
    const parts = Array.from({ length: Math.ceil(asked.length / size) }, (_, i) => asked.slice(i * size, (i + 1) * size));
    const answers = await Promise.all(parts.map((part) => client.multiSearch({ queries: part }) as Promise<{ results: SearchResponse[] }>));
    return answers.flatMap((a) => a.results).map((r) => r.estimatedTotalHits ?? 0);
  });
  // A remembered count of all documents may be older than a word's: never fewer than any word's.
  return { documents: Math.max(...counts), counts: counts.slice(1) };
}

/** Several engines' counts added up (each holds other scopes' documents). */
export function sumCounts(parts: TermCounts[], terms: number): TermCounts {
  return {
    documents: parts.reduce((n, p) => n + p.documents, 0),
    counts: Array.from({ length: terms }, (_, i) => parts.reduce((n, p) => n + (p.counts[i] ?? 0), 0)),
  };
}
