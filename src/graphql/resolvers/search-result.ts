/** SearchResult: the session's fields as Session maps them (session-fields.ts), and the hit's. */
import { sessionNotFound } from '../../errors';
import type { ResolversOf } from './complete';
import { sessionFields as present } from '../../services/presenters/session';
import { sessionFields } from './session-fields';

export const SearchResult: ResolversOf<'SearchResult'> = {
  ...sessionFields,
  sessionId: (r) => r.id,
  clientId: present.clientId,
  rank: (r) => r.hit.rank,
  snippet: (r) => r.hit.snippet,
  matchingExchanges: (r, { limit }) =>
    r.hit.matchingExchanges.slice(0, limit ?? undefined).map((m) => ({ ...m, start: m.start ?? null, exchange: m.exchange ?? null, snippetOf: r.snippetOf })),
  async session(r, _a, { loaders }) {
    const row = await loaders.session.load({ projectId: r.projectId, sessionId: r.id });
    if (!row) throw sessionNotFound(r.id, r.projectId);
    return row;
  },
};

/** MatchingExchange: its snippet marked only when asked for (~0.1 ms each; a session lists up to 20). */
export const MatchingExchange: ResolversOf<'MatchingExchange'> = {
  snippet: (m) => m.snippetOf(m.content),
};
