import type * as mariadb from 'mariadb';
import { bearerToken, verifyKeyToken } from './tokens';
import type { AuthUser } from '../services/context';

const LAST_USED_RESOLUTION_MS = 60_000;

/**
 * Resolves an Authorization header to a user: the signature must verify and the key row must
 * exist, belong to the token's subject, and be neither revoked nor expired. The row is read on
 * every request (one primary-key lookup), so a revocation holds on the very next request on
 * every instance. Returns null for every failure; callers answer 401.
 */
export async function authenticate(pool: mariadb.Pool, secret: string, header: string | undefined): Promise<AuthUser | null> {
  const token = bearerToken(header);
  if (!token) return null;
  const claims = verifyKeyToken(secret, token);
  if (!claims) return null;
  const rows: Array<{ userId: string; expiresAt: Date | null; revokedAt: Date | null; lastUsedAt: Date | null }> =
    await pool.query('SELECT userId, expiresAt, revokedAt, lastUsedAt FROM api_keys WHERE id = ?', [claims.jti]);
  const key = rows[0];
  const now = Date.now();
  if (!key || key.userId !== claims.sub || key.revokedAt || (key.expiresAt && key.expiresAt.getTime() <= now)) {
    return null;
  }
  if (!key.lastUsedAt || now - key.lastUsedAt.getTime() > LAST_USED_RESOLUTION_MS) {
    // Bookkeeping only: never delays or fails the request.
    pool.query('UPDATE api_keys SET lastUsedAt = NOW(3) WHERE id = ?', [claims.jti]).catch(() => undefined);
  }
  return { id: claims.sub, keyId: claims.jti };
}
