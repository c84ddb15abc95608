/**
 * Share link tokens: 16 random bytes (the nonce, stored) and a MAC of them under the server's
 * share key (never stored), both base64url: 44 characters. A token is checked with the MAC before
 * anything is looked up, so a guessed or forged token costs no database read; the token says
 * nothing about the session or project it opens.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

const NONCE_BYTES = 16;
const MAC_BYTES = 16;
const NONCE_CHARS = 22;
const SHARE_TOKEN_RE = /^[A-Za-z0-9_-]{44}$/;

function macOf(key: string, nonce: string): Buffer {
  return createHmac('sha256', key).update(nonce).digest().subarray(0, MAC_BYTES);
}

export function newShareNonce(): string {
  return randomBytes(NONCE_BYTES).toString('base64url');
}

/** The link token of a stored nonce. */
export function shareTokenOf(key: string, nonce: string): string {
  return nonce + macOf(key, nonce).toString('base64url');
}

/** The nonce of a well-formed token whose MAC verifies; else null (no database read needed). */
export function verifyShareToken(key: string, token: string): string | null {
  if (typeof token !== 'string' || !SHARE_TOKEN_RE.test(token)) return null;
  const nonce = token.slice(0, NONCE_CHARS);
  const given = Buffer.from(token.slice(NONCE_CHARS), 'base64url');
  // Canonical base64url only (a trailing character may carry unused bits).
  if (given.length !== MAC_BYTES || given.toString('base64url') !== token.slice(NONCE_CHARS)) return null;
  if (Buffer.from(nonce, 'base64url').toString('base64url') !== nonce) return null;
  return timingSafeEqual(given, macOf(key, nonce)) ? nonce : null;
}
