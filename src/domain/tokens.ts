import { createHash, createPublicKey, createSecretKey, randomBytes, type KeyObject } from 'node:crypto';
import jwt from 'jsonwebtoken';
import { noteSecretIssued } from './issued-secrets';

export interface TokenClaims {
  sub: string;
  jti: string;
  /** Device login tokens only: 'refresh' or 'access'. API keys carry none. */
  use?: DeviceTokenUse;
  /** When the token itself expires (epoch seconds), if it says. */
  exp?: number;
  /** A connector's access token only: the resource (RFC 8707) its grant is for, and the OAuth client's id. */
  aud?: string;
  cid?: string;
}

type DeviceTokenUse = 'refresh' | 'access';

/** A device login token: like a key token (jti = the device's key row), plus its `use`. */
export function signDeviceToken(secret: string, userId: string, keyId: string, use: DeviceTokenUse, expiresAt: Date): string {
  noteSecretIssued();
  const payload = { sub: userId, jti: keyId, use, exp: Math.floor(expiresAt.getTime() / 1000) };
  return jwt.sign(payload, secret, { algorithm: 'HS256' });
}

/** A connector's access token (jti = its grant's key row): `use: 'access'`, the grant's resource as `aud`, the client as `cid`. */
export function signConnectorToken(secret: string, grant: { userId: string; id: string; resource: string; clientId: string }, expiresAt: Date): string {
  noteSecretIssued();
  const payload = { sub: grant.userId, jti: grant.id, use: 'access', aud: grant.resource, cid: grant.clientId, exp: Math.floor(expiresAt.getTime() / 1000) };
  return jwt.sign(payload, secret, { algorithm: 'HS256' });
}

/** Signs an API key token: HS256, sub = user id, jti = key id, optional exp. */
export function signKeyToken(secret: string, userId: string, keyId: string, expiresAt: Date | null): string {
  noteSecretIssued();
  const payload: Record<string, unknown> = { sub: userId, jti: keyId };
  if (expiresAt) payload.exp = Math.floor(expiresAt.getTime() / 1000);
  return jwt.sign(payload, secret, { algorithm: 'HS256', noTimestamp: false });
}

let cachedKey: { secret: string; key: KeyObject | null } | null = null;

/**
 * The KeyObject jsonwebtoken would build from `secret` on every verify, built once (the secret is
 * fixed for the life of the process). Given a string, jsonwebtoken first tries `createPublicKey`
 * (which throws for an HMAC secret, building an exception and its stack each time), then
 * `createSecretKey`: about a third of the CPU of a cheap authenticated request. The same
 * conversion, in the same order; null (no usable key) hands the string through so jsonwebtoken
 * fails exactly as before.
 */
function verificationKey(secret: string): KeyObject | string {
  if (!secret) return secret;
  if (cachedKey?.secret !== secret) {
    let key: KeyObject | null;
    try {
      key = createPublicKey(secret);
    } catch {
      try {
        key = createSecretKey(Buffer.from(secret));
      } catch {
        key = null;
      }
    }
    cachedKey = { secret, key };
  }
  return cachedKey.key ?? secret;
}

/** Verifies signature (HS256 only; `none` and every other alg refused), exp and nbf. */
export function verifyKeyToken(secret: string, token: string): TokenClaims | null {
  try {
    const claims = jwt.verify(token, verificationKey(secret), { algorithms: ['HS256'] });
    if (typeof claims !== 'object' || claims === null) return null;
    const { sub, jti, use, exp, aud, cid } = claims as Record<string, unknown>;
    if (typeof sub !== 'string' || typeof jti !== 'string' || !sub || !jti) return null;
    const expiry = typeof exp === 'number' ? { exp } : {};
    if (use === undefined) return { sub, jti, ...expiry };
    if (use !== 'refresh' && use !== 'access') return null;
    const connector = typeof aud === 'string' && typeof cid === 'string' ? { aud, cid } : {};
    return { sub, jti, use, ...expiry, ...connector };
  } catch {
    return null;
  }
}

/** The token from an `Authorization: Bearer <token>` header, or null. */
export function bearerToken(header: string | undefined): string | null {
  if (!header) return null;
  const m = /^Bearer\s+([A-Za-z0-9_\-.=+/]+)\s*$/i.exec(header);
  return m ? m[1] : null;
}

/** Hex sha256 of a token: what the database keeps of browser sessions, reset links and device codes. */
export const sha256 = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');

/** A random token of `bytes` bytes, base64url: a secret (see issued-secrets.ts). */
export function randomToken(bytes = 32): string {
  noteSecretIssued();
  return randomBytes(bytes).toString('base64url');
}
