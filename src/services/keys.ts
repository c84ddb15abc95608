import crypto from 'node:crypto';
import * as store from '../data/api-keys';
import type { KeyRow, KeyRowState } from '../data/api-keys';
import type { Sql } from '../data/sql';
import type { DbHandles } from '../db/client';
import { signKeyToken, type TokenClaims } from '../domain/tokens';
import { AppError } from '../errors';
import { FULL_SCOPES, parseScopes, storeScopes, type KeyScope } from '../domain/scopes';
import type { Ctx } from './context';
import { CreateKeyInput, parseInput } from './inputs';

export interface ApiKeyDto {
  id: string;
  userId: string;
  name: string;
  createdAt: string;
  lastUsedAt: string | null;
  expiresAt: string | null;
  revokedAt: string | null;
  scopes: KeyScope[];
}

const iso = (d: Date | null) => (d ? d.toISOString() : null);

export const toApiKey = (k: KeyRow): ApiKeyDto => ({
  id: k.id,
  userId: k.userId,
  name: k.name,
  createdAt: k.createdAt.toISOString(),
  lastUsedAt: iso(k.lastUsedAt),
  expiresAt: iso(k.expiresAt),
  revokedAt: iso(k.revokedAt),
  scopes: parseScopes(k.scopes),
});

export interface KeyInput {
  name?: unknown;
  expiresInDays?: unknown;
}

/** The body of `POST /keys` (and GraphQL `createApiKey`'s arguments), parsed by its REST schema. */
export function validateKeyInput(input: unknown): { name: string; expiresInDays: number | undefined; scopes: KeyScope[] } {
  const { name, expiresInDays, scopes } = parseInput(CreateKeyInput, input);
  return { name, expiresInDays: expiresInDays ?? undefined, scopes };
}

/** Creates a key row and returns its token; the token is never stored. */
export async function createKeyForUser(
  db: DbHandles,
  secret: string,
  userId: string,
  name: string,
  expiresInDays?: number,
  /** The key the request was made with: the new key expires no later than it and is revoked with it. */
  parentKeyId?: string,
  scopes: readonly KeyScope[] = FULL_SCOPES,
): Promise<{ key: ApiKeyDto; token: string }> {
  const id = crypto.randomUUID();
  const now = new Date();
  let expiresAt = expiresInDays ? new Date(now.getTime() + expiresInDays * 86_400_000) : null;
  const parent = parentKeyId ? await store.keyById(db.writes, parentKeyId) : undefined;
  if (parent?.expiresAt && (!expiresAt || expiresAt > parent.expiresAt)) expiresAt = parent.expiresAt;
  const row: KeyRow = { id, userId, name, createdAt: now, lastUsedAt: null, expiresAt, revokedAt: null, parentKeyId: parent ? parent.id : null, kind: 'key', scopes: storeScopes(scopes) };
  await store.insertKey(db.writes, row);
  return { key: toApiKey(row), token: signKeyToken(secret, userId, id, expiresAt) };
}

export async function listKeysOfUser(db: DbHandles, userId: string): Promise<ApiKeyDto[]> {
  return (await store.keysOfUser(db.writes, userId)).map(toApiKey);
}

/** Revokes a key; already revoked keys keep their first revocation time. */
export async function revokeKeyById(db: DbHandles, keyId: string, userId?: string): Promise<ApiKeyDto> {
  const row = await store.keyById(db.writes, keyId);
  if (!row || (userId !== undefined && row.userId !== userId)) {
    throw new AppError('NOT_FOUND', 'API key not found', { keyId });
  }
  if (row.revokedAt) return toApiKey(row);
  const now = new Date();
  // The key and every key created with it, at any depth (contract §16).
  const ids: string[] = [keyId];
  for (let level = [keyId]; level.length > 0; ) {
    level = (await store.childKeyIds(db.writes, level)).filter((c) => !ids.includes(c));
    ids.push(...level);
  }
  await store.revokeKeys(db.writes, ids, now);
  return toApiKey((await store.keyById(db.writes, keyId))!);
}

const LAST_USED_RESOLUTION_MS = 60_000;

/**
 * The key row a verified token names, if it is live: it exists, belongs to the token's subject,
 * is neither revoked nor expired, and its user is not disabled. One primary-key lookup per
 * request, so a revocation or a disabled user holds on the very next request on every instance.
 */
export async function liveKeyRow(db: Sql, claims: TokenClaims): Promise<KeyRowState | null> {
  const key = await store.keyWithUser(db, claims.jti);
  if (!key || key.userId !== claims.sub || key.revokedAt || key.disabledAt) return null;
  if (key.expiresAt && key.expiresAt.getTime() <= Date.now()) return null;
  return key;
}

/** Records use of a key row at one-minute resolution. Bookkeeping only: never delays or fails the request. */
export function touchKey(db: Sql, keyId: string, lastUsedAt: Date | null): void {
  if (!lastUsedAt || Date.now() - lastUsedAt.getTime() > LAST_USED_RESOLUTION_MS) {
    store.touchKey(db, keyId).catch(() => undefined);
  }
}

// The front doors' view: always the caller's own keys.
export const createApiKey = (ctx: Ctx, input: unknown) => {
  const { name, expiresInDays, scopes } = validateKeyInput(input);
  return createKeyForUser(ctx.deps.db, ctx.deps.config.jwtSecret, ctx.user.id, name, expiresInDays, ctx.user.keyId ?? undefined, scopes);
};
export const listApiKeys = (ctx: Ctx) => listKeysOfUser(ctx.deps.db, ctx.user.id);
export const revokeApiKey = (ctx: Ctx, keyId: string) => revokeKeyById(ctx.deps.db, keyId, ctx.user.id);
