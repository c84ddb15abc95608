/**
 * Connector grants: what a person allowed an MCP client on the consent page, and the tokens it
 * gets for it. A grant is a credential row of api_keys (kind 'connector', named `<client>
 * (connector)`): it is listed with the keys, revoked like one (its next call → 401 on every
 * instance: authentication reads the row on each request), dies with its user's disable and with
 * a password change that revokes credentials. Its scope is a key scope: `archive:read` is a
 * read-only key, `archive:write` a read-write one.
 *
 * Access tokens are JWTs of one hour naming the grant (jti), the resource (aud) and the client
 * (cid). Refresh tokens are random, kept as sha256, and rotate: each is spent by its exchange, and
 * presenting a spent one again revokes the whole grant (someone holds a copy). An authorization
 * code presented twice revokes the grant it gave too.
 */
import crypto from 'node:crypto';
import { InvalidGrantError, InvalidScopeError, InvalidTargetError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import type { OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import * as keyStore from '../data/api-keys';
import * as store from '../data/oauth';
import { redactField } from '../domain/redaction';
import { parseScopes, type KeyScope } from '../domain/scopes';
import { randomToken, sha256, signConnectorToken, verifyKeyToken } from '../domain/tokens';
import { requireTeamWriter } from './access';
import { recordAudit } from './audit';
import type { Ctx, PublicCtx } from './context';
import { insertDerivedKey, liveKeyRow, revokeLineage } from './keys';

const CODE_VALID_MS = 10 * 60_000;
const ACCESS_VALID_S = 60 * 60;
const REFRESH_VALID_MS = 90 * 86_400_000;
export const OAUTH_SCOPES = ['archive:read', 'archive:write'] as const;
const SUFFIX = ' (connector)';

/** `archive:read archive:write` → the key scopes; unknown words → null. */
export function keyScopesOf(all: readonly string[]): KeyScope[] | null {
  const words = all.filter(Boolean);
  if (words.some((w) => !(OAUTH_SCOPES as readonly string[]).includes(w))) return null;
  return words.includes('archive:write') ? ['read', 'write'] : ['read'];
}

const oauthScopeOf = (stored: string) => (parseScopes(stored).includes('write') ? 'archive:read archive:write' : 'archive:read');

interface ConsentDecision {
  clientId: string;
  clientName: string;
  redirectUri: string;
  codeChallenge: string;
  resource: string;
  /** What the person allowed: `archive:write` only if the client asked and they ticked it. */
  write: boolean;
  /** Where new projects go (null: personal). */
  teamId: string | null;
}

/** Revokes a grant (and what was made with it) and records why. */
async function revokeGrant(ctx: PublicCtx, grantId: string, reason: string): Promise<void> {
  const db = ctx.deps.db.writes;
  const grant = await keyStore.keyById(db, grantId);
  if (!grant || grant.kind !== 'connector') return;
  await revokeLineage(db, [grantId], new Date());
  await recordAudit(ctx, {
    action: 'connector.revoke',
    target: { type: 'connector', id: grantId },
    actorUserId: grant.userId,
    teamId: grant.teamId,
    detail: { reason },
  });
}

/** The person (a browser session) allows the client: an authorization code for it, single use, 10 minutes. */
export async function issueAuthorizationCode(ctx: Ctx, d: ConsentDecision): Promise<string> {
  if (d.teamId !== null) await requireTeamWriter(ctx, d.teamId);
  const db = ctx.deps.db.writes;
  const now = new Date();
  await store.deleteExpired(db, now);
  const code = randomToken(32);
  await store.insertCode(db, {
    codeHash: sha256(code),
    clientId: d.clientId,
    clientName: d.clientName.slice(0, 100),
    userId: ctx.user.id,
    redirectUri: d.redirectUri,
    codeChallenge: d.codeChallenge,
    scopes: d.write ? 'read,write' : 'read',
    resource: d.resource,
    teamId: d.teamId,
    createdAt: now,
    expiresAt: new Date(now.getTime() + CODE_VALID_MS),
  });
  return code;
}

async function liveCode(ctx: PublicCtx, clientId: string, code: string) {
  const row = await store.codeByHash(ctx.deps.db.writes, sha256(code));
  if (!row || row.clientId !== clientId) throw new InvalidGrantError('Invalid authorization code');
  return row;
}

/** The PKCE challenge the code was issued with. */
export async function challengeOfCode(ctx: PublicCtx, clientId: string, code: string): Promise<string> {
  return (await liveCode(ctx, clientId, code)).codeChallenge;
}

async function issueTokens(ctx: PublicCtx, grant: { id: string; userId: string; scopes: string }, clientId: string, resource: string): Promise<OAuthTokens> {
  const db = ctx.deps.db.writes;
  const now = new Date();
  const refresh = randomToken(32);
  await store.insertRefreshToken(db, {
    tokenHash: sha256(refresh),
    grantId: grant.id,
    clientId,
    resource,
    createdAt: now,
    expiresAt: new Date(now.getTime() + REFRESH_VALID_MS),
  });
  const access = signConnectorToken(
    ctx.deps.config.jwtSecret,
    { userId: grant.userId, id: grant.id, resource, clientId },
    new Date(now.getTime() + ACCESS_VALID_S * 1000),
  );
  return { access_token: access, token_type: 'Bearer', expires_in: ACCESS_VALID_S, refresh_token: refresh, scope: oauthScopeOf(grant.scopes) };
}

/**
 * Redeems a code (PKCE already verified) for the grant and its first tokens. A code spent before
 * revokes what it gave. `redirectUri` and `resource`, when sent, must be the ones the code was
 * issued for.
 */
export async function exchangeAuthorizationCode(
  ctx: PublicCtx,
  clientId: string,
  code: string,
  redirectUri: string | undefined,
  resource: string | undefined,
): Promise<OAuthTokens> {
  const db = ctx.deps.db.writes;
  const row = await liveCode(ctx, clientId, code);
  const now = new Date();
  if (!(await store.spendCode(db, row.codeHash, now))) {
    if (row.usedAt && row.grantId) await revokeGrant(ctx, row.grantId, 'authorization code used twice');
    throw new InvalidGrantError(row.usedAt ? 'Authorization code already used' : 'Authorization code expired');
  }
  if (redirectUri !== undefined && redirectUri !== row.redirectUri) throw new InvalidGrantError('redirect_uri differs from the authorization request');
  if (resource !== undefined && resource !== row.resource) throw new InvalidTargetError('resource differs from the authorization request');
  const name = redactField(row.clientName, ctx.deps.config.redactSecrets).slice(0, 100 - SUFFIX.length) + SUFFIX;
  const grant = await insertDerivedKey(
    db,
    {
      id: crypto.randomUUID(),
      userId: row.userId,
      name,
      createdAt: now,
      lastUsedAt: null,
      expiresAt: null,
      revokedAt: null,
      parentKeyId: null,
      kind: 'connector',
      scopes: row.scopes,
      teamId: row.teamId,
    },
    null,
  );
  await store.setCodeGrant(db, row.codeHash, grant!.id);
  await recordAudit(ctx, {
    action: 'connector.grant',
    target: { type: 'connector', id: grant!.id },
    actorUserId: row.userId,
    teamId: row.teamId,
    detail: { client: row.clientName, scope: oauthScopeOf(row.scopes) },
  });
  return issueTokens(ctx, grant!, clientId, row.resource);
}

/** The grant's row if it is live (not revoked, user not disabled) and a connector's. */
async function liveGrant(ctx: PublicCtx, grantId: string) {
  const db = ctx.deps.db.writes;
  const grant = await keyStore.keyById(db, grantId);
  if (!grant || grant.kind !== 'connector') return null;
  return (await liveKeyRow(db, { sub: grant.userId, jti: grant.id })) ? grant : null;
}

/**
 * A refresh token for new tokens (rotation); a spent one presented again revokes the grant. A
 * request the grant cannot answer (another resource, a wider scope) is refused before the token
 * is spent, so that the client can still use it as it should.
 */
export async function exchangeRefreshToken(
  ctx: PublicCtx,
  clientId: string,
  refreshToken: string,
  scopes: string[] | undefined,
  resource: string | undefined,
): Promise<OAuthTokens> {
  const db = ctx.deps.db.writes;
  const row = await store.refreshTokenByHash(db, sha256(refreshToken));
  if (!row || row.clientId !== clientId) throw new InvalidGrantError('Invalid refresh token');
  const now = new Date();
  const reused = async () => {
    await revokeGrant(ctx, row.grantId, 'refresh token reused');
    return new InvalidGrantError('Refresh token already used: the grant is revoked');
  };
  if (row.usedAt) throw await reused();
  if (row.expiresAt <= now) throw new InvalidGrantError('Refresh token expired');
  if (resource !== undefined && resource !== row.resource) throw new InvalidTargetError('resource differs from the grant');
  const grant = await liveGrant(ctx, row.grantId);
  if (!grant) throw new InvalidGrantError('The grant has been revoked');
  if (scopes && scopes.length > 0) {
    const asked = keyScopesOf(scopes);
    if (!asked || (asked.includes('write') && !parseScopes(grant.scopes).includes('write'))) throw new InvalidScopeError('Scope beyond the grant');
  }
  // Spent at once (two requests racing with the same token: one wins, the other is a reuse).
  if (!(await store.spendRefreshToken(db, row.tokenHash, now))) throw await reused();
  return issueTokens(ctx, grant, clientId, row.resource);
}

/** Revokes the grant of a refresh or access token of this client (RFC 7009: always succeeds). */
export async function revokeConnectorToken(ctx: PublicCtx, clientId: string, token: string): Promise<void> {
  const db = ctx.deps.db.writes;
  const row = await store.refreshTokenByHash(db, sha256(token));
  let grantId: string | null = row && row.clientId === clientId ? row.grantId : null;
  if (!row) {
    const claims = verifyKeyToken(ctx.deps.config.jwtSecret, token);
    if (claims?.use === 'access' && claims.cid === clientId) grantId = claims.jti;
  }
  if (grantId) await revokeGrant(ctx, grantId, 'revoked by the client');
}
