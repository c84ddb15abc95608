/**
 * What the recent index holds of a user's sessions, for a search (adapter.ts): the main index is
 * searched without those of them that may have an older copy there.
 */
import type { SessionDocument } from '../../domain/search-documents';
import type { MeiliConnection } from './connection';
import { recentHeldNone, recentHeldSeen } from './count-cache';
import { meiliString, scopeFilter } from './filter';
import { hasEngineCode } from './http-client';
import { MAX_TOTAL_HITS } from './index-settings';

/** `filter` (the owner's) without the given sessions, by their exact keys. */
export const excluding = (filter: string, digests: string[]) => `${filter} AND NOT sessionDigest IN [${digests.map(meiliString).join(', ')}]`;

/** Documents read per request when listing the sessions a user holds in the recent index. */
const HELD_PAGE = 10_000;

/** What the recent index holds of a user's sessions. */
export interface Held {
  /** It holds any of them (else it is not searched). */
  any: boolean;
  /**
   * The digests of those that may have an older copy in the main index: the main index is
   * searched without them. A new session (noMainCopy) is not among them, so that a backlog of
   * new sessions just uploaded does not make every search read and exclude thousands.
   */
  shadowing: string[];
}

/** Nothing held: the main index is searched as it is. */
export const NOTHING_HELD: Held = { any: false, shadowing: [] };

/** Whether the recent index holds any document of these scopes: one request, one document read. */
export async function holdsAny(conn: MeiliConnection, indexUid: string, scopes: readonly string[]): Promise<boolean> {
  const page = await conn
    .searcher()
    .index(indexUid)
    .getDocuments({ filter: scopeFilter(scopes), fields: ['sessionDigest'], limit: 1 });
  return page.results.length > 0;
}

/** The engine's address, which the memory of what its recent index held is kept under. */
const hostOf = (conn: MeiliConnection) => conn.url ?? '';

/** Remembers what a search saw of these scopes in the recent index `indexUid` (count-cache.ts). */
export function heldSeen(conn: MeiliConnection, indexUid: string, scopes: readonly string[], any: boolean): void {
  recentHeldSeen(hostOf(conn), indexUid, scopes, any);
}

/**
 * While the last search of these scopes found none of their documents in the recent index
 * `indexUid` (count-cache.ts, recentHeldNone): whether it holds any now, one request (holdsAny),
 * and what it sees remembered. Otherwise null: nothing short is known, what it holds is read.
 */
export function recentHoldsNow(conn: MeiliConnection, indexUid: string, scopes: readonly string[]): Promise<boolean> | null {
  if (!recentHeldNone(hostOf(conn), indexUid, scopes)) return null;
  const now = holdsAny(conn, indexUid, scopes).then((any) => {
    heldSeen(conn, indexUid, scopes, any);
    return any;
  });
  // A caller that does not wait for it (its search failed first) leaves no unhandled rejection.
  now.catch(() => undefined);
  return now;
}

/**
 * What the recent index holds of these scopes' sessions. Unmarked whole sessions (one document
 * each) are read as documents, every page of them; large sessions (a document per fragment, and
 * documents from before `whole`) are asked collapsed, one hit per session: a resumed large
 * session is thousands of fragments (read as documents, 12 ms for 5,000; asked collapsed, 0.8).
 * `anyKnown`: the caller has just seen that it holds some (holdsAny), so that is not asked again.
 */
export async function heldSessions(conn: MeiliConnection, indexUid: string, scopes: readonly string[], anyKnown = false): Promise<Held> {
  const index = conn.searcher().index(indexUid);
  const owned = scopeFilter(scopes);
  const read = async (filter: string) => {
    const digests = new Set<string>();
    for (let offset = 0; ; offset += HELD_PAGE) {
      const page = await index.getDocuments<Pick<SessionDocument, 'sessionDigest'>>({ filter, fields: ['sessionDigest'], limit: HELD_PAGE, offset });
      for (const d of page.results) digests.add(d.sessionDigest);
      if (page.results.length < HELD_PAGE) return [...digests];
    }
  };
  const collapsed = async (filter: string) => {
    const res = await index.search<Pick<SessionDocument, 'sessionDigest'>>('', {
      filter,
      distinct: 'sessionDigest',
      attributesToRetrieve: ['sessionDigest'],
      limit: MAX_TOTAL_HITS,
    });
    // More sessions than a search lists: read as documents.
    return res.hits.length < MAX_TOTAL_HITS ? res.hits.map((h) => h.sessionDigest) : read(filter);
  };
  // Whether it holds any (unless the caller just asked: `anyKnown`), beside the reads.
  const any = anyKnown ? Promise.resolve(true) : holdsAny(conn, indexUid, scopes);
  any.catch(() => undefined);
  let shadowing: string[];
  try {
    // Documents without the flag (written before it existed) may have a main copy.
    const unmarked = `(${owned}) AND NOT noMainCopy = true`;
    const [whole, large] = await Promise.all([read(`${unmarked} AND whole = true`), collapsed(`${unmarked} AND NOT whole = true`)]);
    shadowing = large.length ? [...new Set([...whole, ...large])] : whole;
  } catch (err) {
    if (!hasEngineCode(err, 'invalid_document_filter') && !hasEngineCode(err, 'invalid_search_filter')) throw err;
    // `noMainCopy` is not filterable (yet): the settings are applied at start, after a long
    // engine task perhaps, or an instance of an older version applied its own. Every one held.
    shadowing = await read(owned);
  }
  return { any: shadowing.length > 0 || (await any), shadowing };
}
