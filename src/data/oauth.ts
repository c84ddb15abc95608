/**
 * The OAuth store of MCP connectors (tables `oauth_clients`, `oauth_codes`, `oauth_refresh_tokens`).
 * Grants themselves are rows of `api_keys` (kind "connector", src/data/api-keys.ts).
 */
import type { OAuthClientModel, OAuthCodeModel, OAuthRefreshTokenModel } from '../generated/prisma/models';
import type { Sql } from './sql';
import type { DriverRow } from '../domain/driver-row';

type OAuthClientRow = DriverRow<OAuthClientModel>;
type OAuthCodeRow = DriverRow<OAuthCodeModel>;
type RefreshTokenRow = DriverRow<OAuthRefreshTokenModel>;

export async function insertClient(db: Sql, c: Pick<OAuthClientRow, 'id' | 'name' | 'metadata'>, now: Date): Promise<void> {
  await db.execute('INSERT INTO oauth_clients (id, name, metadata, createdAt, lastUsedAt) VALUES (?, ?, ?, ?, ?)', c.id, c.name, c.metadata, now, now);
}

export async function clientById(db: Sql, id: string): Promise<OAuthClientRow | undefined> {
  return (await db.query<OAuthClientRow>('SELECT id, name, metadata, createdAt, lastUsedAt FROM oauth_clients WHERE id = ?', id))[0];
}

export async function touchClient(db: Sql, id: string, now: Date): Promise<void> {
  await db.execute('UPDATE oauth_clients SET lastUsedAt = ? WHERE id = ?', now, id);
}

/** Removes clients unused since `before`; the number removed. */
export function deleteClientsUnusedSince(db: Sql, before: Date): Promise<number> {
  return db.execute('DELETE FROM oauth_clients WHERE lastUsedAt < ?', before);
}

export async function countClients(db: Sql): Promise<number> {
  return (await db.query<{ n: number }>('SELECT COUNT(*) AS n FROM oauth_clients'))[0].n;
}

export async function insertCode(db: Sql, c: Omit<OAuthCodeRow, 'usedAt' | 'grantId'>): Promise<void> {
  await db.execute(
    'INSERT INTO oauth_codes (codeHash, clientId, clientName, userId, redirectUri, codeChallenge, scopes, resource, teamId, createdAt, expiresAt) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
    c.codeHash,
    c.clientId,
    c.clientName,
    c.userId,
    c.redirectUri,
    c.codeChallenge,
    c.scopes,
    c.resource,
    c.teamId,
    c.createdAt,
    c.expiresAt,
  );
}

export async function codeByHash(db: Sql, codeHash: string): Promise<OAuthCodeRow | undefined> {
  return (
    await db.query<OAuthCodeRow>(
      'SELECT codeHash, clientId, clientName, userId, redirectUri, codeChallenge, scopes, resource, teamId, createdAt, expiresAt, usedAt, grantId FROM oauth_codes WHERE codeHash = ?',
      codeHash,
    )
  )[0];
}

/** Marks an unused, unexpired code used (atomically: of two concurrent exchanges one wins); true when this call did. */
export async function spendCode(db: Sql, codeHash: string, now: Date): Promise<boolean> {
  return (await db.execute('UPDATE oauth_codes SET usedAt = ? WHERE codeHash = ? AND usedAt IS NULL AND expiresAt > ?', now, codeHash, now)) === 1;
}

export async function setCodeGrant(db: Sql, codeHash: string, grantId: string): Promise<void> {
  await db.execute('UPDATE oauth_codes SET grantId = ? WHERE codeHash = ?', grantId, codeHash);
}

/** Codes and refresh tokens past their end (a spent refresh token is kept until then, to recognise its reuse). */
export async function deleteExpired(db: Sql, now: Date): Promise<void> {
  await db.execute('DELETE FROM oauth_codes WHERE expiresAt < ?', now);
  await db.execute('DELETE FROM oauth_refresh_tokens WHERE expiresAt < ?', now);
}

/** A user's authorization codes and the refresh tokens of their connector grants (before their keys go). */
export async function deleteOAuthOfUser(tx: Sql, userId: string): Promise<void> {
  await tx.execute('DELETE FROM oauth_codes WHERE userId = ?', userId);
  await tx.execute('DELETE FROM oauth_refresh_tokens WHERE grantId IN (SELECT id FROM api_keys WHERE userId = ?)', userId);
}

export async function insertRefreshToken(db: Sql, t: Omit<RefreshTokenRow, 'usedAt'>): Promise<void> {
  await db.execute(
    'INSERT INTO oauth_refresh_tokens (tokenHash, grantId, clientId, resource, createdAt, expiresAt) VALUES (?, ?, ?, ?, ?, ?)',
    t.tokenHash,
    t.grantId,
    t.clientId,
    t.resource,
    t.createdAt,
    t.expiresAt,
  );
}

export async function refreshTokenByHash(db: Sql, tokenHash: string): Promise<RefreshTokenRow | undefined> {
  return (
    await db.query<RefreshTokenRow>(
      'SELECT tokenHash, grantId, clientId, resource, createdAt, expiresAt, usedAt FROM oauth_refresh_tokens WHERE tokenHash = ?',
      tokenHash,
    )
  )[0];
}

/** Marks an unspent, unexpired refresh token spent; true when this call did. */
export async function spendRefreshToken(db: Sql, tokenHash: string, now: Date): Promise<boolean> {
  return (
    (await db.execute('UPDATE oauth_refresh_tokens SET usedAt = ? WHERE tokenHash = ? AND usedAt IS NULL AND expiresAt > ?', now, tokenHash, now)) === 1
  );
}
