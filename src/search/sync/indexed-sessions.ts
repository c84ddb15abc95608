/** What an index already holds of the sessions a write names (index-writer.ts). */
import type { Index } from 'meilisearch';
import type { SessionDocument } from '../../domain/search-documents';
import { ownedSessionsFilter } from '../engine/filter';

/** A session as a write names it: its owner and key. */
type SessionRef = { userId: string; projectId: string; sessionId: string };

/**
 * Which of these sessions (their keys) the main index holds a copy of: one placeholder search
 * collapsed per session (a large session's fragments are not read). Null when the main index
 * cannot tell (its engine away, the index being recreated): writes to the recent index go on,
 * unmarked (a session not marked is only ever left out of the main index's searches).
 */
export async function withMainCopy(main: Index<SessionDocument>, refs: SessionRef[]): Promise<Set<string> | null> {
  if (refs.length === 0) return new Set();
  try {
    const res = await main.search<Pick<SessionDocument, 'sessionKey'>>('', {
      filter: ownedSessionsFilter(refs),
      distinct: 'sessionDigest',
      attributesToRetrieve: ['sessionKey'],
      limit: refs.length,
    });
    return new Set(res.hits.map((h) => h.sessionKey));
  } catch {
    return null;
  }
}

/** id → hash of the fragments the index holds for these sessions. */
export async function indexedFragments(index: Index<SessionDocument>, refs: SessionRef[]): Promise<Map<string, Map<string, string>>> {
  const out = new Map<string, Map<string, string>>();
  if (refs.length === 0) return out;
  const filter = ownedSessionsFilter(refs);
  const limit = 10_000;
  for (let offset = 0; ; offset += limit) {
    const page = await index.getDocuments<Pick<SessionDocument, 'id' | 'sessionKey' | 'hash'>>({
      filter,
      fields: ['id', 'sessionKey', 'hash'],
      limit,
      offset,
    });
    for (const d of page.results) {
      const m = out.get(d.sessionKey) ?? new Map<string, string>();
      m.set(d.id, d.hash);
      out.set(d.sessionKey, m);
    }
    if (page.results.length < limit) return out;
  }
}
