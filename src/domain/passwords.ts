import crypto from 'node:crypto';
import { hash, verify } from '@node-rs/argon2';
import { invalid } from '../errors';

/**
 * Passwords: argon2id through @node-rs/argon2 with its defaults (argon2id,
 * m = 19 MiB, t = 2, p = 1: OWASP's minimum recommendation), stored as PHC strings.
 */
export const PASSWORD_MIN = 10;
export const PASSWORD_MAX = 256;

/** 10–256 characters (Unicode code points), else a 400 saying so. */
export function checkPassword(value: unknown, field = 'password'): string {
  if (value === undefined || value === null || value === '') throw invalid(`Missing required field: ${field}`);
  if (typeof value !== 'string') throw invalid(`Invalid value for ${field}. Must be a string`);
  const length = [...value].length;
  if (length < PASSWORD_MIN || length > PASSWORD_MAX) {
    throw invalid(`Invalid value for ${field}. Must be ${PASSWORD_MIN} to ${PASSWORD_MAX} characters`);
  }
  return value;
}

export const hashPassword = (password: string): Promise<string> => hash(password);

// A hash of a random password, verified against when there is no user (or no password), so that
// an unknown email costs the same work as a wrong password (no user enumeration by timing).
let dummy: Promise<string> | null = null;

/** True only when `stored` is a hash of `password`; with no stored hash, the same work, then false. */
export async function verifyPassword(stored: string | null | undefined, password: string): Promise<boolean> {
  if (!stored) {
    dummy ??= hash(crypto.randomBytes(24).toString('base64'));
    await verify(await dummy, password).catch(() => false);
    return false;
  }
  try {
    return await verify(stored, password);
  } catch {
    return false;
  }
}
