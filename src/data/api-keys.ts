/**
 * The API keys store (table `api_keys`): keys and device logins' refresh tokens (kind 'device').
 * Every read of a key goes through here, on the driver.
 */
import type { ApiKeyModel, UserModel } from '../generated/prisma/models';
import { marks, prepared, type Sql } from './sql';
import type { DriverRow } from '../domain/driver-row';
import { membershipPairs } from './teams';

/** The columns a read of a key returns (every column of `api_keys`). */
const KEY_KEYS = ['id', 'userId', 'name', 'createdAt', 'lastUsedAt', 'expiresAt', 'revokedAt', 'parentKeyId', 'kind', 'scopes', 'teamId'] as const satisfies ReadonlyArray<
  keyof ApiKeyModel
>;

// A column added to the model and not to KEY_KEYS fails the typecheck.
const _everyColumn: [Exclude<keyof ApiKeyModel, (typeof KEY_KEYS)[number]>] extends [never] ? true : never = true;

/**
 * A key's row (prisma/schema.prisma's `ApiKey`, as the driver returns it): kind "key" (an API key) or
 * "device" (a device login's refresh token); scopes "read" or "read,write".
 */
export type KeyRow = Pick<DriverRow<ApiKeyModel>, Exclude<(typeof KEY_KEYS)[number], 'teamId'>> & {
  /** The team that owns projects created through this credential (null or absent: the user's own). */
  teamId?: ApiKeyModel['teamId'];
};

/** A key row with what authentication needs of its user. */
export type KeyRowState = Pick<KeyRow, 'userId' | 'kind' | 'expiresAt' | 'revokedAt' | 'lastUsedAt' | 'scopes'> &
  Pick<DriverRow<UserModel>, 'role' | 'disabledAt'> & {
    /** The user's team memberships as `teamId:role` pairs joined by commas, in teamId order ('' for none). */
    memberships: string;
  };

const KEY_COLUMNS = KEY_KEYS.join(', ');

export async function keyById(db: Sql, id: string): Promise<KeyRow | undefined> {
  return (await db.query<KeyRow>(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE id = ?`, id))[0];
}

/**
 * The key with its user's role and state, one row per team membership (one row with a null
 * teamId when there is none), in teamId order. A join rather than a GROUP_CONCAT subquery: the
 * subquery cost MariaDB about 45 µs more per request (bench/statements.ts).
 */
const KEY_WITH_USER_SQL = prepared(
  `SELECT k.userId, k.kind, k.expiresAt, k.revokedAt, k.lastUsedAt, k.scopes, u.role, u.disabledAt, m.teamId, m.role AS teamRole
     FROM api_keys k JOIN users u ON u.id = k.userId LEFT JOIN team_members m ON m.userId = k.userId
    WHERE k.id = ? ORDER BY m.teamId`,
);

/**
 * The key with its user's role, state and team memberships: one statement on every authenticated
 * request (the memberships ride along, so the access rule needs no second read for key callers).
 */
export async function keyWithUser(db: Sql, id: string): Promise<KeyRowState | undefined> {
  const rows = await db.query<Omit<KeyRowState, 'memberships'> & { teamId: string | null; teamRole: string | null }>(KEY_WITH_USER_SQL, id);
  if (rows.length === 0) return undefined;
  const { userId, kind, expiresAt, revokedAt, lastUsedAt, scopes, role, disabledAt } = rows[0];
  return { userId, kind, expiresAt, revokedAt, lastUsedAt, scopes, role, disabledAt, memberships: membershipPairs(rows) };
}

/** A user's keys and device tokens, newest first. */
export function keysOfUser(db: Sql, userId: string): Promise<KeyRow[]> {
  return db.query<KeyRow>(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE userId = ? ORDER BY createdAt DESC, id ASC`, userId);
}

/** Ids of the keys and device tokens created with any of `parentIds` (revoked or not). */
export async function childKeyIds(db: Sql, parentIds: readonly string[]): Promise<string[]> {
  if (parentIds.length === 0) return [];
  const rows = await db.query<{ id: string }>(`SELECT id FROM api_keys WHERE parentKeyId IN (${marks(parentIds)})`, ...parentIds);
  return rows.map((r) => r.id);
}

export async function insertKey(db: Sql, k: KeyRow): Promise<void> {
  await db.execute(`INSERT INTO api_keys (${KEY_COLUMNS}) VALUES (${marks(KEY_KEYS.length)})`, ...KEY_KEYS.map((c) => k[c] ?? null));
}

/** Revokes those of `ids` not revoked yet (a revoked key keeps its first revocation time). */
export async function revokeKeys(db: Sql, ids: readonly string[], at: Date): Promise<void> {
  if (ids.length === 0) return;
  await db.execute(`UPDATE api_keys SET revokedAt = ? WHERE id IN (${marks(ids)}) AND revokedAt IS NULL`, at, ...ids);
}

/** Revokes every key and device token of a user not revoked yet (a password change or reset). */
export async function revokeKeysOfUser(db: Sql, userId: string, at: Date): Promise<number> {
  return db.execute('UPDATE api_keys SET revokedAt = ? WHERE userId = ? AND revokedAt IS NULL', at, userId);
}

/** Records use of a key now. */
export async function touchKey(db: Sql, id: string): Promise<void> {
  await db.execute('UPDATE api_keys SET lastUsedAt = NOW(3) WHERE id = ?', id);
}
