import type { Sql } from '../data/sql';
import { bearerToken, verifyKeyToken } from '../domain/tokens';
import type { AuthUser } from './context';
import { liveKeyRow, touchKey } from './keys';
import { roleOf } from '../domain/roles';
import { parseScopes } from '../domain/scopes';

/**
 * Resolves an Authorization header to a user. Accepted: an API key token (kind 'key', no `use`)
 * a device login's access token (kind 'device', `use: 'access'`, valid 1 hour, refused as soon
 * as its refresh token is revoked) and an MCP connector's access token (kind 'connector', `use:
 * 'access'` with the resource its grant is for, valid 1 hour, refused as soon as the grant is
 * revoked). A refresh token is not an API key. Returns null
 * for every failure; callers answer 401.
 */
export async function authenticate(db: Sql, secret: string, header: string | undefined): Promise<AuthUser | null> {
  const token = bearerToken(header);
  if (!token) return null;
  const claims = verifyKeyToken(secret, token);
  if (!claims) return null;
  const key = await liveKeyRow(db, claims);
  if (!key) return null;
  const accepted =
    key.kind === 'device'
      ? claims.use === 'access' && claims.aud === undefined
      : key.kind === 'connector'
        ? claims.use === 'access' && claims.aud !== undefined
        : key.kind === 'key' && claims.use === undefined;
  if (!accepted) return null;
  touchKey(db, claims.jti, key.lastUsedAt);
  const readOnly = !parseScopes(key.scopes).includes('write');
  // An access token lives an hour; its key row (the device session) years.
  const ends = claims.use === 'access' && claims.exp !== undefined ? { credentialExpiresAt: new Date(claims.exp * 1000) } : {};
  const resource = claims.aud !== undefined ? { resource: claims.aud } : {};
  return { id: claims.sub, keyId: claims.jti, role: roleOf(key.role), memberships: key.memberships, ...(readOnly ? { readOnly } : {}), ...ends, ...resource };
}
