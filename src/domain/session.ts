/** What a session is, without I/O. */

/** Session ids are UUIDs, accepted in any case and stored lower-case. */
export const SESSION_ID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The display title: the user's title, else the client's `metadata.title`, else the name. The one
 * rule for every place a session is shown or sent (services/sessions.ts `sessionTitle` applies it
 * to a stored row; the console reads it as GraphQL's `displayTitle`).
 */
export const displayTitle = (s: { userTitle?: string | null; name: string; metadata: { title?: string | null } }): string =>
  s.userTitle || s.metadata.title || s.name;
