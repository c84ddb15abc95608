/**
 * How many of the documents of some owner scopes hold each of a few words: the document
 * frequencies that weigh a session's words when its related sessions are looked for without an
 * embedder (src/domain/distinctive-terms.ts). Multi-searches on one index, every query asking for
 * no hits (the engine's estimated count): the first counts every document of the scopes, the
 * others each word as written (quoted: no typo or prefix variants); counts asked a moment ago are
 * remembered (count-cache.ts).
 */
import type { TermCounts } from '../../domain/distinctive-terms';
import type { MeiliConnection } from './connection';
import { engineCounts } from './count-cache';
import { scopeFilter } from './filter';
import { recentHoldsNow } from './held-sessions';

/** Requests the queries are split into, sent at once (count-cache.ts engineCounts). */
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
  const [documents, ...counts] = await engineCounts(client, queries, requests);
  return { documents, counts };
}

/**
 * termCounts of the recent index. While the last search of these scopes found none of their
 * documents there (held-sessions.ts, recentHoldsNow), one request says whether it still holds
 * none, and then every count is 0 without asking for them (zeros are never remembered: each call
 * asked them all again). A session written since is there: its words are counted.
 */
export async function recentTermCounts(conn: MeiliConnection, indexUid: string, scopes: readonly string[], terms: readonly string[]): Promise<TermCounts> {
  const now = recentHoldsNow(conn, indexUid, scopes);
  if (now && !(await now)) return { documents: 0, counts: terms.map(() => 0), recent: 0 };
  const counted = await termCounts(conn, indexUid, scopes, terms);
  return { ...counted, recent: counted.documents };
}

/** Several engines' counts added up (each holds other scopes' documents); `recent` from the recent indexes' parts. */
export function sumCounts(parts: TermCounts[], terms: number): TermCounts {
  return {
    documents: parts.reduce((n, p) => n + p.documents, 0),
    counts: Array.from({ length: terms }, (_, i) => parts.reduce((n, p) => n + (p.counts[i] ?? 0), 0)),
    recent: parts.reduce((n, p) => n + (p.recent ?? 0), 0),
  };
}
