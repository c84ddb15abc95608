import crypto from 'node:crypto';
import * as store from '../data/device-codes';
import { isDuplicateKey } from '../data/errors';
import type { Sql } from '../data/sql';
import { noteSecretIssued } from '../domain/issued-secrets';
import { bearerToken, sha256, signDeviceToken, verifyKeyToken } from '../domain/tokens';
import { AppError } from '../errors';
import { insertDerivedKey, liveKeyRow, revokeLineage, touchKey } from './keys';
import { DeviceLoginInput, type DeviceMetadata } from './account-inputs';
import { DeviceCodeInput } from './inputs';
import { parseInput } from '../domain/inputs';
import { requireTeamWriter } from './access';
import { recordAudit } from './audit';
import type { Ctx, PublicCtx } from './context';

/** Device login. */
const CODE_ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789'; // no 0/O, 1/I: read aloud and typed by people
const CODE_VALID_MS = 10 * 60_000;
const REFRESH_VALID_MS = 10 * 365 * 86_400_000;
const ACCESS_VALID_MS = 60 * 60_000;
const INVALID_CODE = 'Invalid or expired device code';
const USED_CODE = 'Device code has already been used';

/** `abc-123`, `ABC123` → `ABC123`; anything else → null (never matches a stored code). */
function normalizeCode(code: string): string | null {
  const c = code
    .trim()
    .replace(/^(.{3})-(.{3})$/s, '$1$2')
    .toUpperCase();
  return /^[A-Z0-9]{6}$/.test(c) ? c : null;
}

function newCode(): string {
  noteSecretIssued();
  let s = '';
  for (let i = 0; i < 6; i++) s += CODE_ALPHABET[crypto.randomInt(CODE_ALPHABET.length)];
  return s;
}

/**
 * POST /device-codes `{teamId?}` (no body: personal): the caller's code for /cli-login, single use,
 * valid 10 minutes (expired codes are cleared on the way). The device token the code is exchanged
 * for derives from the credential the caller asked with (none: a browser session): it expires no
 * later (a device access token: no later than that token's hour) and is revoked with it. Bound to
 * a team (where the caller is admin or member) when one is named: the client logged in with it
 * creates its new projects in that team.
 */
export async function issueDeviceCode(ctx: Ctx, body: unknown): Promise<{ code: string; expiresAt: string }> {
  const { teamId } = parseInput(DeviceCodeInput, body ?? {});
  if (teamId != null) await requireTeamWriter(ctx, teamId);
  const { db } = ctx.deps;
  const userId = ctx.user.id;
  const sourceKeyId = ctx.user.keyId;
  const sourceExpiresAt = ctx.user.credentialExpiresAt ?? null;
  const now = new Date();
  await store.deleteExpiredDeviceCodes(db.writes, now);
  for (let attempt = 0; ; attempt++) {
    const code = newCode();
    const expiresAt = new Date(now.getTime() + CODE_VALID_MS);
    try {
      await store.insertDeviceCode(db.writes, {
        codeHash: sha256(code),
        userId,
        createdAt: now,
        expiresAt,
        parentKeyId: sourceKeyId,
        parentExpiresAt: sourceExpiresAt,
        teamId: teamId ?? null,
      });
      await recordAudit(ctx, { action: 'device.code', target: { type: 'device' }, teamId: teamId ?? null });
      return { code, expiresAt: expiresAt.toISOString() };
    } catch (err) {
      // A live code with the same letters (one in a billion per live code): draw again.
      if (!isDuplicateKey(err) || attempt >= 5) throw err;
    }
  }
}

interface DeviceLoginResult {
  refreshToken: string;
  createdAt: string;
  expiresAt: string;
  user: { email: string };
}

/** Validates the device-login body: `device_code` required, the metadata optional strings. */
export function deviceLoginInput(body: unknown): { code: string; meta: DeviceMetadata } {
  return parseInput(DeviceLoginInput, body);
}

/**
 * Exchanges a code for a refresh token (a key row of kind 'device', named `<client> on <hostname>`,
 * 10 years). The code is spent atomically: of two concurrent exchanges one wins. A code asked for
 * with a key or a device access token gives a token derived from that key or device session: it
 * expires no later than that key or that access token and is revoked with it (or its session);
 * when that source is gone the code is invalid. Throws 401s with the exact messages the upload CLI
 * shows.
 */
export async function deviceLogin(ctx: PublicCtx, body: unknown): Promise<DeviceLoginResult> {
  const { db } = ctx.deps;
  const secret = ctx.deps.config.jwtSecret;
  const { code, meta } = deviceLoginInput(body);
  const normalized = normalizeCode(code);
  if (!normalized) throw new AppError('UNAUTHENTICATED', INVALID_CODE);
  const codeHash = sha256(normalized);
  const now = new Date();
  const spent = await store.spendDeviceCode(db.writes, codeHash, now);
  const row = await store.deviceCodeWithUser(db.writes, codeHash);
  if (!spent || !row || row.user.disabledAt) {
    await recordAudit(ctx, { action: 'device.login', target: { type: 'device' }, actorUserId: row?.userId ?? null, result: 'failure' });
  }
  if (!spent) {
    throw new AppError('UNAUTHENTICATED', row && row.usedAt && row.expiresAt > now ? USED_CODE : INVALID_CODE);
  }
  if (!row || row.user.disabledAt) throw new AppError('UNAUTHENTICATED', INVALID_CODE);
  const name = `${meta.client || 'client'} on ${meta.hostname || 'unknown host'}`.slice(0, 100);
  const wanted = new Date(now.getTime() + REFRESH_VALID_MS);
  const key = await insertDerivedKey(
    db.writes,
    {
      id: crypto.randomUUID(),
      userId: row.userId,
      name,
      createdAt: now,
      lastUsedAt: null,
      expiresAt: wanted,
      revokedAt: null,
      parentKeyId: null,
      kind: 'device',
      scopes: 'read,write',
      teamId: row.teamId,
    },
    row.parentKeyId,
    row.parentExpiresAt,
  );
  if (!key) throw new AppError('UNAUTHENTICATED', INVALID_CODE);
  await recordAudit(ctx, { action: 'device.login', target: { type: 'key', id: key.id }, actorUserId: row.userId, teamId: row.teamId });
  const expiresAt = key.expiresAt ?? wanted;
  return {
    refreshToken: signDeviceToken(secret, row.userId, key.id, 'refresh', expiresAt),
    createdAt: now.toISOString(),
    expiresAt: expiresAt.toISOString(),
    user: { email: row.user.email },
  };
}

/** The live device row a refresh token names (kind 'device', not revoked, user enabled), or null. */
async function refreshRow(db: Sql, secret: string, header: string | undefined) {
  const token = bearerToken(header);
  const claims = token ? verifyKeyToken(secret, token) : null;
  if (!claims || claims.use !== 'refresh') return null;
  const row = await liveKeyRow(db, claims);
  return row && row.kind === 'device' ? { claims, row } : null;
}

/** A 1-hour access token for a live refresh token, or null (→ 401). */
export async function deviceRefresh(ctx: PublicCtx, header: string | undefined): Promise<{ accessToken: string; createdAt: string; expiresAt: string } | null> {
  const db = ctx.deps.db.writes;
  const secret = ctx.deps.config.jwtSecret;
  const found = await refreshRow(db, secret, header);
  if (!found) return null;
  touchKey(db, found.claims.jti, found.row.lastUsedAt);
  const now = new Date();
  // Never past the refresh token's own expiry.
  const limit = found.row.expiresAt?.getTime() ?? Infinity;
  const expiresAt = new Date(Math.min(now.getTime() + ACCESS_VALID_MS, limit));
  return {
    accessToken: signDeviceToken(secret, found.claims.sub, found.claims.jti, 'access', expiresAt),
    createdAt: now.toISOString(),
    expiresAt: expiresAt.toISOString(),
  };
}

/**
 * Revokes the refresh token the header carries, if it is one, with everything created with its
 * device session (keys minted with its access tokens, device tokens through codes they asked for);
 * always succeeds.
 */
export async function deviceLogout(ctx: PublicCtx, header: string | undefined): Promise<void> {
  const db = ctx.deps.db.writes;
  const found = await refreshRow(db, ctx.deps.config.jwtSecret, header);
  if (found) await revokeLineage(db, [found.claims.jti], new Date());
}
