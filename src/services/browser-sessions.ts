import * as store from '../data/browser-sessions';
import type { Sql } from '../data/sql';
import { randomToken, sha256 } from '../domain/tokens';
import type { AnyCtx } from './context';

/** Browser sessions: random 256-bit tokens, kept only as sha256, 30-day idle expiry. */
export const SESSION_COOKIE = 'sa_session';
export const SESSION_IDLE_MS = 30 * 86_400_000;
const LAST_USED_RESOLUTION_MS = 60_000;

export interface BrowserSession {
  tokenHash: string;
  userId: string;
  role: string;
  csrfToken: string;
  /** The user's team memberships, read with the session (AuthUser.memberships). */
  memberships: string;
  /** Its use was recorded now (once a minute at most): time to renew the cookie's Max-Age too. */
  touched: boolean;
}

/** How many browser sessions a user holds at most unless configured (BROWSER_SESSIONS_PER_USER). */
const SESSIONS_PER_USER = 100;

/**
 * Starts a session; returns the cookie's token (never stored) and the session's CSRF token. A
 * user holds at most `BROWSER_SESSIONS_PER_USER`: beyond it, the oldest end.
 */
export async function startBrowserSession(ctx: AnyCtx, userId: string): Promise<{ token: string; csrfToken: string }> {
  const db = ctx.deps.db.writes;
  const maxSessions = ctx.deps.config.browserSessionsPerUser ?? SESSIONS_PER_USER;
  const token = randomToken();
  const csrfToken = randomToken();
  await store.insertBrowserSession(db, sha256(token), userId, csrfToken);
  await store.trimSessionsOfUser(db, userId, maxSessions);
  return { token, csrfToken };
}

/**
 * Authentication (this and `authenticate`) is what makes a caller's context, so it takes the
 * database handle to read through rather than a context.
 *
 * The live session a cookie token names: it exists, was used within 30 days, and its user is not
 * disabled; else null. Use is recorded at one-minute resolution (that is what keeps it alive).
 */
export async function resolveBrowserSession(db: Sql, token: string): Promise<BrowserSession | null> {
  if (!token || token.length > 200) return null;
  const tokenHash = sha256(token);
  const row = await store.browserSessionWithUser(db, tokenHash);
  if (!row || row.disabledAt) return null;
  const now = Date.now();
  if (now - row.lastUsedAt.getTime() >= SESSION_IDLE_MS) {
    store.deleteBrowserSession(db, tokenHash).catch(() => undefined);
    return null;
  }
  const touched = now - row.lastUsedAt.getTime() > LAST_USED_RESOLUTION_MS;
  if (touched) store.touchBrowserSession(db, tokenHash).catch(() => undefined);
  return { tokenHash, userId: row.userId, role: row.role, csrfToken: row.csrfToken, memberships: row.memberships, touched };
}

/** The session a cookie names, as sign-out and the session check read it (from the primary: a session just made). */
export function browserSessionOf(ctx: AnyCtx, token: string): Promise<BrowserSession | null> {
  return resolveBrowserSession(ctx.deps.db.writes, token);
}

/** Ends the browser session the caller holds (sign-out). */
export function endBrowserSession(ctx: AnyCtx, session: BrowserSession): Promise<void> {
  return store.deleteBrowserSession(ctx.deps.db.writes, session.tokenHash);
}

/** Ends every session of a user, except `keepTokenHash` when given. */
export function endSessionsOfUser(ctx: AnyCtx, userId: string, keepTokenHash?: string): Promise<void> {
  return store.deleteSessionsOfUser(ctx.deps.db.writes, userId, keepTokenHash);
}
