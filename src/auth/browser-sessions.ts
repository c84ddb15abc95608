import crypto from 'node:crypto';
import type * as mariadb from 'mariadb';

/** Browser sessions (contract §10): random 256-bit tokens, kept only as sha256, 30-day idle expiry. */
export const SESSION_COOKIE = 'sa_session';
export const SESSION_IDLE_MS = 30 * 86_400_000;
const LAST_USED_RESOLUTION_MS = 60_000;

export const sha256 = (s: string) => crypto.createHash('sha256').update(s, 'utf8').digest('hex');
export const randomToken = (bytes = 32) => crypto.randomBytes(bytes).toString('base64url');

export interface BrowserSession {
  tokenHash: string;
  userId: string;
  role: string;
  csrfToken: string;
  /** Its use was recorded now (once a minute at most): time to renew the cookie's Max-Age too. */
  touched: boolean;
}

/** Starts a session; returns the cookie's token (never stored) and the session's CSRF token. */
export async function startBrowserSession(pool: mariadb.Pool, userId: string): Promise<{ token: string; csrfToken: string }> {
  const token = randomToken();
  const csrfToken = randomToken();
  await pool.query('INSERT INTO user_sessions (tokenHash, userId, csrfToken, createdAt, lastUsedAt) VALUES (?, ?, ?, NOW(3), NOW(3))', [
    sha256(token),
    userId,
    csrfToken,
  ]);
  return { token, csrfToken };
}

/**
 * The live session a cookie token names: it exists, was used within 30 days, and its user is not
 * disabled; else null. Use is recorded at one-minute resolution (that is what keeps it alive).
 */
export async function resolveBrowserSession(pool: mariadb.Pool, token: string): Promise<BrowserSession | null> {
  if (!token || token.length > 200) return null;
  const tokenHash = sha256(token);
  const rows: Array<{ userId: string; csrfToken: string; lastUsedAt: Date; role: string; disabledAt: Date | null }> = await pool.query(
    `SELECT s.userId, s.csrfToken, s.lastUsedAt, u.role, u.disabledAt
       FROM user_sessions s JOIN users u ON u.id = s.userId
      WHERE s.tokenHash = ?`,
    [tokenHash],
  );
  const row = rows[0];
  if (!row || row.disabledAt) return null;
  const now = Date.now();
  if (now - row.lastUsedAt.getTime() >= SESSION_IDLE_MS) {
    pool.query('DELETE FROM user_sessions WHERE tokenHash = ?', [tokenHash]).catch(() => undefined);
    return null;
  }
  const touched = now - row.lastUsedAt.getTime() > LAST_USED_RESOLUTION_MS;
  if (touched) {
    pool.query('UPDATE user_sessions SET lastUsedAt = NOW(3) WHERE tokenHash = ?', [tokenHash]).catch(() => undefined);
  }
  return { tokenHash, userId: row.userId, role: row.role, csrfToken: row.csrfToken, touched };
}

export async function endBrowserSession(pool: mariadb.Pool, tokenHash: string): Promise<void> {
  await pool.query('DELETE FROM user_sessions WHERE tokenHash = ?', [tokenHash]);
}

/** Ends every session of a user, except `keepTokenHash` when given. */
export async function endSessionsOfUser(pool: mariadb.Pool, userId: string, keepTokenHash?: string): Promise<void> {
  if (keepTokenHash) await pool.query('DELETE FROM user_sessions WHERE userId = ? AND tokenHash <> ?', [userId, keepTokenHash]);
  else await pool.query('DELETE FROM user_sessions WHERE userId = ?', [userId]);
}
