import { createPublicKey, createSecretKey, type KeyObject } from 'node:crypto';
import jwt from 'jsonwebtoken';

export interface TokenClaims {
  sub: string;
  jti: string;
}

/** Signs an API key token: HS256, sub = user id, jti = key id, optional exp. */
export function signKeyToken(secret: string, userId: string, keyId: string, expiresAt: Date | null): string {
  const payload: Record<string, unknown> = { sub: userId, jti: keyId };
  if (expiresAt) payload.exp = Math.floor(expiresAt.getTime() / 1000);
  return jwt.sign(payload, secret, { algorithm: 'HS256', noTimestamp: false });
}

const verificationKeys = new Map<string, KeyObject | null>();

/**
 * The KeyObject jsonwebtoken would build from `secret` on every verify, built once per secret.
 * Given a string, jsonwebtoken first tries `createPublicKey` (which throws for an HMAC secret,
 * building an exception and its stack each time), then `createSecretKey`: about a third of the CPU
 * of a cheap authenticated request. The same conversion, in the same order, done once; null (no
 * usable key) hands the string through so jsonwebtoken fails exactly as before.
 */
function verificationKey(secret: string): KeyObject | string {
  if (!secret) return secret;
  let key = verificationKeys.get(secret);
  if (key === undefined) {
    try {
      key = createPublicKey(secret);
    } catch {
      try {
        key = createSecretKey(Buffer.from(secret));
      } catch {
        key = null;
      }
    }
    if (verificationKeys.size >= 16) verificationKeys.clear();
    verificationKeys.set(secret, key);
  }
  return key ?? secret;
}

/** Verifies signature (HS256 only; `none` and every other alg refused), exp and nbf. */
export function verifyKeyToken(secret: string, token: string): TokenClaims | null {
  try {
    const claims = jwt.verify(token, verificationKey(secret), { algorithms: ['HS256'] });
    if (typeof claims !== 'object' || claims === null) return null;
    const { sub, jti } = claims as Record<string, unknown>;
    if (typeof sub !== 'string' || typeof jti !== 'string' || !sub || !jti) return null;
    return { sub, jti };
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
