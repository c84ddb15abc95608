/**
 * Engine counts, asked (engineCounts) and remembered for a short while: a fast path, fenced here.
 *
 * A search of several words first asks the engine how many of the caller's documents hold each
 * word (planned-page.ts, wordCounts), and related sessions how many hold each of its candidate
 * words (term-counts.ts); each such count costs the engine about as much as a search, and the
 * search waits for them before it can ask for its page. The same counts come back often (the
 * next page of a query, a query typed on, a filter changed back, related sessions of a session
 * opened again), and they only weigh words against each other: a count a few seconds old weighs
 * as well. What it buys is in docs/benchmarks.md ("Search": counts remembered and not).
 *
 * - Remembered per engine, index, filter (the caller's scopes and filters are in it: one caller's
 *   counts never stand for another's) and query, for COUNT_TTL_MS.
 * - Only counts above zero: a word nobody holds is left out of a search, so a zero is asked again
 *   every time, and a session written a moment ago is found by its words at once.
 * - At most COUNTS_MAX entries (then the oldest half goes); keys are hashed, so a long filter
 *   costs no more memory than a short one.
 * - Beside the counts, whether a filter's searches find large sessions (largeSessionsLikely): their
 *   count is then asked with the page, not after it.
 * - And whether the recent index held none of a caller's documents at their last search
 *   (recentHeldNone): the recent index's word counts are then not asked (they would all be 0),
 *   for a search nor for related sessions (term-counts.ts), but whether it still holds none.
 *   Every search reads what the recent index holds of the caller anyway (held-sessions.ts); one
 *   that finds some there after all is asked again with them (adapter.ts), so nothing is missed.
 */
import crypto from 'node:crypto';
import type { Meilisearch, SearchResponse } from 'meilisearch';

export const COUNT_TTL_MS = 30_000;
const COUNTS_MAX = 50_000;

/** Count and when it was asked, by hashed key; a Map keeps insertion order (oldest first). */
const remembered = new Map<string, { count: number; at: number }>();

/** One count query: documents of `indexUid` among `filter`'s holding `q` ('' for all of them). */
export interface CountQuery {
  indexUid: string;
  q: string;
  filter: string;
}

const keyOf = (host: string, x: CountQuery) => crypto.createHash('sha1').update(`${host}\n${x.indexUid}\n${x.filter}\n${x.q}`).digest('base64');

/**
 * The counts of `queries` on the engine at `host`, in their order: the ones remembered, and the
 * others asked by `ask` (given the missing queries in order, answering their counts in order).
 * Nothing is asked when every count is remembered.
 */
export async function countsThrough(host: string, queries: readonly CountQuery[], ask: (missing: CountQuery[]) => Promise<number[]>): Promise<number[]> {
  const now = Date.now();
  const keys = queries.map((x) => keyOf(host, x));
  const counts: Array<number | undefined> = keys.map((k) => {
    const e = remembered.get(k);
    return e && now - e.at < COUNT_TTL_MS ? e.count : undefined;
  });
  const missing = counts.flatMap((c, i) => (c === undefined ? [i] : []));
  if (missing.length > 0) {
    const asked = await ask(missing.map((i) => queries[i]));
    const at = Date.now();
    missing.forEach((i, j) => {
      const count = asked[j] ?? 0;
      counts[i] = count;
      if (count > 0) remember(keys[i], count, at);
    });
  }
  return counts as number[];
}

/**
 * The counts of `queries` on `client`'s engine, in their order, the first being every document of
 * the filter (q ''): those not remembered asked as multi-searches of `limit: 0` queries (the
 * engine's estimated count), split into `requests` requests sent at once (the engine answers the
 * queries of one multi-search one after another, on one thread, and separate requests on
 * several). The first count is never below another: a remembered total may be older than a
 * word's count, and a word held by more documents than there are would weigh below nothing.
 */
export async function engineCounts(client: Meilisearch, queries: readonly CountQuery[], requests = 1): Promise<number[]> {
  const counts = await countsThrough(client.config.host, queries, async (missing) => {
    const asked = missing.map((x) => ({ ...x, limit: 0, attributesToRetrieve: [] }));
    const size = Math.ceil(asked.length / Math.max(1, requests));
    const parts = Array.from({ length: Math.ceil(asked.length / size) }, (_, i) => asked.slice(i * size, (i + 1) * size));
    const answers = await Promise.all(parts.map((part) => client.multiSearch({ queries: part }) as Promise<{ results: SearchResponse[] }>));
    return answers.flatMap((a) => a.results).map((r) => r.estimatedTotalHits ?? 0);
  });
  counts[0] = Math.max(...counts);
  return counts;
}

const largeKeyOf = (indexUid: string, filter: string) => crypto.createHash('sha1').update(`large\n${indexUid}\n${filter}`).digest('base64');

/**
 * Whether a search of `filter` in index `indexUid` found documents of large sessions (not
 * `whole`) within COUNT_TTL_MS. Such a search counts those sessions in one more request
 * (counted-page.ts, planned-page.ts); while this is remembered, that request is sent with the
 * page rather than after it. A hint only: a search that needs the count without it asks for it
 * after its page, and a count asked for nothing is left unused.
 */
export function largeSessionsLikely(indexUid: string, filter: string): boolean {
  const e = remembered.get(largeKeyOf(indexUid, filter));
  return e !== undefined && Date.now() - e.at < COUNT_TTL_MS;
}

/** A search of `filter` found documents of large sessions (see largeSessionsLikely). */
export function largeSessionsFound(indexUid: string, filter: string): void {
  remember(largeKeyOf(indexUid, filter), 1, Date.now());
}

/**
 * The count of large sessions a search of `filter` in `indexUid` may need, asked by `ask`: sent at
 * once while such searches find large sessions (largeSessionsLikely; its failure left for later),
 * else when `needed` is called. `needed` remembers that this search found them and returns the
 * count, asking for it (again) if it was not asked early or failed.
 */
export function largeSessionsCount(indexUid: string, filter: string, ask: () => Promise<number>): { needed: () => Promise<number> } {
  const early = largeSessionsLikely(indexUid, filter) ? ask().catch(() => null) : null;
  return {
    needed: async () => {
      largeSessionsFound(indexUid, filter);
      return (await early) ?? (await ask());
    },
  };
}

const recentKeyOf = (host: string, indexUid: string, scopes: readonly string[]) =>
  crypto
    .createHash('sha1')
    .update(`recent\n${host}\n${indexUid}\n${scopes.join('\n')}`)
    .digest('base64');

/**
 * Whether the last search of these scopes found none of their documents in the recent index
 * `indexUid` on the engine at `host` (recentHeldSeen). Not limited in time: every search sees
 * again what the recent index holds of its scopes and corrects it.
 */
export function recentHeldNone(host: string, indexUid: string, scopes: readonly string[]): boolean {
  return remembered.get(recentKeyOf(host, indexUid, scopes))?.count === 0;
}

/** What a search saw: the recent index holds some of these scopes' documents (`any`) or none. */
export function recentHeldSeen(host: string, indexUid: string, scopes: readonly string[], any: boolean): void {
  remember(recentKeyOf(host, indexUid, scopes), any ? 1 : 0, Date.now());
}

function remember(key: string, count: number, at: number): void {
  if (remembered.size >= COUNTS_MAX) {
    let drop = COUNTS_MAX / 2;
    for (const k of remembered.keys()) {
      if (drop-- <= 0) break;
      remembered.delete(k);
    }
  }
  remembered.delete(key);
  remembered.set(key, { count, at });
}

/** Forgets every count (benches measure searches with and without them). */
export function forgetCounts(): void {
  remembered.clear();
}
