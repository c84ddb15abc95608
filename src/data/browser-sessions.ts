/** The browser sessions store (table `user_sessions`): kept by sha256 of the cookie's token. */
import { prepared, type Sql } from './sql';
import { membershipPairs } from './teams';

interface BrowserSessionState {
  userId: string;
  csrfToken: string;
  lastUsedAt: Date;
  role: string;
  disabledAt: Date | null;
  /** The user's team memberships as `teamId:role` pairs joined by commas, in teamId order ('' for none). */
  memberships: string;
}

export async function insertBrowserSession(db: Sql, tokenHash: string, userId: string, csrfToken: string): Promise<void> {
  await db.execute('INSERT INTO user_sessions (tokenHash, userId, csrfToken, createdAt, lastUsedAt) VALUES (?, ?, ?, NOW(3), NOW(3))', tokenHash, userId, csrfToken);
}

/**
 * Ends a user's sessions beyond the `keep` newest (by creation; the oldest end first). The
 * derived table is what lets MariaDB take a LIMIT inside the IN.
 */
export async function trimSessionsOfUser(db: Sql, userId: string, keep: number): Promise<number> {
  return db.execute(
    `DELETE FROM user_sessions WHERE userId = ? AND tokenHash IN (
       SELECT tokenHash FROM (
         SELECT tokenHash FROM user_sessions WHERE userId = ?
          ORDER BY createdAt DESC, tokenHash DESC LIMIT 18446744073709551615 OFFSET ?
       ) AS older
     )`,
    userId,
    userId,
    keep,
  );
}

/**
 * The session with its user's role, state and team memberships, one statement on every request a
 * browser session makes (as for a key: the access rule needs no second read).
 */
const SESSION_WITH_USER_SQL = prepared(
  `SELECT s.userId, s.csrfToken, s.lastUsedAt, u.role, u.disabledAt, m.teamId, m.role AS teamRole
     FROM user_sessions s JOIN users u ON u.id = s.userId LEFT JOIN team_members m ON m.userId = s.userId
    WHERE s.tokenHash = ? ORDER BY m.teamId`,
);

export async function browserSessionWithUser(db: Sql, tokenHash: string): Promise<BrowserSessionState | undefined> {
  const rows = await db.query<Omit<BrowserSessionState, 'memberships'> & { teamId: string | null; teamRole: string | null }>(SESSION_WITH_USER_SQL, tokenHash);
  if (rows.length === 0) return undefined;
  const { userId, csrfToken, lastUsedAt, role, disabledAt } = rows[0];
  return { userId, csrfToken, lastUsedAt, role, disabledAt, memberships: membershipPairs(rows) };
}

export async function touchBrowserSession(db: Sql, tokenHash: string): Promise<void> {
  await db.execute('UPDATE user_sessions SET lastUsedAt = NOW(3) WHERE tokenHash = ?', tokenHash);
}

export async function deleteBrowserSession(db: Sql, tokenHash: string): Promise<void> {
  await db.execute('DELETE FROM user_sessions WHERE tokenHash = ?', tokenHash);
}

/** Ends every session of a user, except `keepTokenHash` when given. */
export async function deleteSessionsOfUser(db: Sql, userId: string, keepTokenHash?: string): Promise<void> {
  if (keepTokenHash) await db.execute('DELETE FROM user_sessions WHERE userId = ? AND tokenHash <> ?', userId, keepTokenHash);
  else await db.execute('DELETE FROM user_sessions WHERE userId = ?', userId);
}
