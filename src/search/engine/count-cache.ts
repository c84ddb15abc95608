/**
 * Engine counts remembered for a short while: a fast path, fenced here.
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
 */
import crypto from 'node:crypto';

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
