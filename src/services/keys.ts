import crypto from 'node:crypto';
import * as store from '../data/api-keys';
import type { KeyRow, KeyRowState } from '../data/api-keys';
import type { Sql } from '../data/sql';
import { signKeyToken, type TokenClaims } from '../domain/tokens';
import { redactField } from '../domain/redaction';
import { AppError, invalid, unauthenticated } from '../errors';
import { parseScopes, storeScopes, type KeyScope } from '../domain/scopes';
import { isUserCtx, type Ctx, type OperatorCtx } from './context';
import { requireTeamWriter, requireWriteAccess } from './access';
import { recordAudit } from './audit';
import { CreateKeyInput } from './inputs';
import { parseInput } from '../domain/inputs';
import { presentApiKey, type ApiKeyDto } from './presenters/key';

export interface KeyInput {
  name?: unknown;
  expiresInDays?: unknown;
}

/** The body of `POST /keys` (and GraphQL `createApiKey`'s arguments), parsed by its REST schema. */
export function validateKeyInput(input: unknown): { name: string; expiresInDays: number | undefined; scopes: KeyScope[]; teamId: string | null } {
  const { name, expiresInDays, scopes, teamId } = parseInput(CreateKeyInput, input);
  return { name, expiresInDays: expiresInDays ?? undefined, scopes, teamId: teamId ?? null };
}

/** The sooner of two ends (null: none). */
const earliest = (a: Date | null, b: Date | null): Date | null => (a && b ? (a < b ? a : b) : (a ?? b));

/** The key or device token `id` if it can still be the source of another: the user's own, not revoked, not expired. */
async function liveSource(db: Sql, id: string, userId: string): Promise<KeyRow | null> {
  const row = await store.keyById(db, id);
  if (!row || row.userId !== userId || row.revokedAt) return null;
  if (row.expiresAt && row.expiresAt.getTime() <= Date.now()) return null;
  return row;
}

/**
 * Inserts a key or device token created with another credential (`sourceId`; null: with a browser
 * session or the admin CLI, a root). It expires no later than its source, nor than `notAfter` (the
 * source credential's own end when it is sooner than its row's: a device access token's hour, not
 * its device session's years), has no scope its source lacks, and records it (`parentKeyId`), so
 * that revoking the source revokes it (`revokeLineage`). Null, with nothing left behind, when the
 * source is no longer live.
 *
 * Lineage is enforced when credentials are created and revoked, never when they are used:
 * authentication stays one primary-key lookup per request. The race between creating a child and
 * revoking its source is closed by order: a revocation marks a level before it looks for that
 * level's children, and a child is inserted before its source is looked at again. Whichever
 * comes second sees the other.
 */
export async function insertDerivedKey(db: Sql, row: KeyRow, sourceId: string | null, notAfter?: Date | null): Promise<KeyRow | null> {
  if (!sourceId) {
    await store.insertKey(db, row);
    return row;
  }
  const source = await liveSource(db, sourceId, row.userId);
  if (!source) return null;
  const expiresAt = earliest(earliest(row.expiresAt, source.expiresAt), notAfter ?? null);
  // Nor can it do more than its source: a read-only source gives read-only children.
  const scopes = parseScopes(source.scopes).includes('write') ? row.scopes : storeScopes(['read']);
  const child: KeyRow = { ...row, expiresAt, scopes, parentKeyId: source.id };
  await store.insertKey(db, child);
  if (!(await liveSource(db, source.id, row.userId))) {
    await store.revokeKeys(db, [child.id], new Date());
    return null;
  }
  return child;
}

/**
 * Revokes `ids` and every key and device token created with them, at any depth, level by level:
 * a level is marked revoked before its children are looked up (see `insertDerivedKey`). Already
 * revoked rows keep their first revocation time; their children are still walked (rows from
 * before device logouts cascaded may have live children).
 */
export async function revokeLineage(db: Sql, ids: readonly string[], at: Date): Promise<void> {
  const seen = new Set(ids);
  for (let level = [...seen]; level.length > 0;) {
    await store.revokeKeys(db, level, at);
    level = (await store.childKeyIds(db, level)).filter((c) => !seen.has(c));
    for (const c of level) seen.add(c);
  }
}

/**
 * The user whose keys a caller manages: a signed-in user always their own (`userId` is ignored);
 * the operator (the admin CLI) names the user.
 */
function keyOwner(ctx: Ctx | OperatorCtx, userId: string | undefined): string {
  if (isUserCtx(ctx)) return ctx.user.id;
  if (!userId) throw invalid('Missing required field: userId');
  return userId;
}

/** The caller's keys (the operator: `userId`'s). */
export async function listApiKeys(ctx: Ctx | OperatorCtx, userId?: string): Promise<ApiKeyDto[]> {
  return (await store.keysOfUser(ctx.deps.db.writes, keyOwner(ctx, userId))).map(presentApiKey);
}

/**
 * Revokes a key (or device token) and what was created with it; already revoked keys keep their
 * first revocation time. A user revokes only their own keys (anyone else's is 404); the operator any.
 */
export async function revokeApiKey(ctx: Ctx | OperatorCtx, keyId: string): Promise<ApiKeyDto> {
  requireWriteAccess(ctx);
  const { db } = ctx.deps;
  const row = await store.keyById(db.writes, keyId);
  if (!row || (isUserCtx(ctx) && row.userId !== ctx.user.id)) {
    throw new AppError('NOT_FOUND', 'API key not found', { keyId });
  }
  // The key and every credential created with it, at any depth.
  await revokeLineage(db.writes, [keyId], new Date());
  await recordAudit(
    ctx,
    row.kind === 'connector'
      ? { action: 'connector.revoke', target: { type: 'connector', id: keyId }, teamId: row.teamId, detail: { reason: 'keys page' } }
      : { action: 'key.revoke', target: { type: 'key', id: keyId }, teamId: row.teamId, detail: { kind: row.kind } },
  );
  return presentApiKey((await store.keyById(db.writes, keyId))!);
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

/**
 * Creates an API key and returns its token (never stored). A signed-in user makes their own: the
 * key expires no later than, has no scope beyond, and is revoked with the credential the request
 * was made with (a device access token: no later than that token's hour, and revoked with its
 * device session; a credential no longer live → 401, nothing created); binding it to a team needs
 * the role admin or member there; its name is redacted like any text. The operator (the admin CLI)
 * makes one for `userId`, as a root of its own lineage.
 */
export async function createApiKey(ctx: Ctx | OperatorCtx, input: unknown, userId?: string): Promise<{ key: ApiKeyDto; token: string }> {
  requireWriteAccess(ctx);
  const owner = keyOwner(ctx, userId);
  const { name, expiresInDays, scopes, teamId } = validateKeyInput(input);
  if (isUserCtx(ctx) && teamId !== null) await requireTeamWriter(ctx, teamId);
  const secret = ctx.deps.config.jwtSecret;
  if (!secret) throw new Error('createApiKey: the context carries no signing secret');
  const now = new Date();
  const row = await insertDerivedKey(
    ctx.deps.db.writes,
    {
      id: crypto.randomUUID(),
      userId: owner,
      name: isUserCtx(ctx) ? redactField(name, ctx.deps.config.redactSecrets) : name,
      createdAt: now,
      lastUsedAt: null,
      expiresAt: expiresInDays ? new Date(now.getTime() + expiresInDays * 86_400_000) : null,
      revokedAt: null,
      parentKeyId: null,
      kind: 'key',
      scopes: storeScopes(scopes),
      teamId,
    },
    isUserCtx(ctx) ? ctx.user.keyId : null,
    isUserCtx(ctx) ? ctx.user.credentialExpiresAt : null,
  );
  if (!row) throw unauthenticated();
  await recordAudit(ctx, {
    action: 'key.create',
    target: { type: 'key', id: row.id },
    teamId,
    detail: { scopes: row.scopes, ...(isUserCtx(ctx) ? {} : { forUser: owner }) },
  });
  return { key: presentApiKey(row), token: signKeyToken(secret, owner, row.id, row.expiresAt) };
}
