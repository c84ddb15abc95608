import type * as mariadb from 'mariadb';
import { bearerToken, verifyKeyToken, type TokenClaims } from './tokens';
import type { AuthUser } from '../services/context';
import { roleOf } from '../services/users';

const LAST_USED_RESOLUTION_MS = 60_000;

export interface KeyRowState {
  userId: string;
  kind: string;
  expiresAt: Date | null;
  revokedAt: Date | null;
  lastUsedAt: Date | null;
  role: string;
  disabledAt: Date | null;
}

/**
 * The key row a verified token names, if it is live: it exists, belongs to the token's subject,
 * is neither revoked nor expired, and its user is not disabled. One primary-key lookup per
 * request, so a revocation or a disabled user holds on the very next request on every instance.
 */
export async function liveKeyRow(pool: mariadb.Pool, claims: TokenClaims): Promise<KeyRowState | null> {
  const rows: KeyRowState[] = await pool.query(
    `SELECT k.userId, k.kind, k.expiresAt, k.revokedAt, k.lastUsedAt, u.role, u.disabledAt
       FROM api_keys k JOIN users u ON u.id = k.userId
      WHERE k.id = ?`,
    [claims.jti],
  );
  const key = rows[0];
  if (!key || key.userId !== claims.sub || key.revokedAt || key.disabledAt) return null;
  if (key.expiresAt && key.expiresAt.getTime() <= Date.now()) return null;
  return key;
}

/** Records use of a key row at one-minute resolution. Bookkeeping only: never delays or fails the request. */
export function touchKey(pool: mariadb.Pool, keyId: string, lastUsedAt: Date | null): void {
  if (!lastUsedAt || Date.now() - lastUsedAt.getTime() > LAST_USED_RESOLUTION_MS) {
    pool.query('UPDATE api_keys SET lastUsedAt = NOW(3) WHERE id = ?', [keyId]).catch(() => undefined);
  }
}

/**
 * Resolves an Authorization header to a user. Accepted: an API key token (kind 'key', no `use`)
 * and a device login's access token (kind 'device', `use: 'access'`, valid 1 hour, refused as soon
 * as its refresh token is revoked). A refresh token is not an API key (contract §11). Returns null
 * for every failure; callers answer 401.
 */
export async function authenticate(pool: mariadb.Pool, secret: string, header: string | undefined): Promise<AuthUser | null> {
  const token = bearerToken(header);
  if (!token) return null;
  const claims = verifyKeyToken(secret, token);
  if (!claims) return null;
  const key = await liveKeyRow(pool, claims);
  if (!key) return null;
  const accepted = key.kind === 'device' ? claims.use === 'access' : key.kind === 'key' && claims.use === undefined;
  if (!accepted) return null;
  touchKey(pool, claims.jti, key.lastUsedAt);
  return { id: claims.sub, keyId: claims.jti, role: roleOf(key.role) };
}
