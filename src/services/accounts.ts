import { revokeKeysOfUser } from '../data/api-keys';
import { deleteSessionsOfUser } from '../data/browser-sessions';
import { tryNamedLock } from '../data/locks';
import * as store from '../data/users';
import type { DbHandles } from '../db/client';
import { hashPassword, verifyPassword } from '../domain/passwords';
import { randomToken, sha256 } from '../domain/tokens';
import { AppError, invalid } from '../errors';
import { checkEmail, newUserRow, toAccount, type AccountDto } from './users';
import { AccountByAdminInput, NewAccountInput, PasswordChangeInput, PasswordResetInput, SignInInput, UserByAdminInput } from './account-inputs';
import { parseInput } from './inputs';

export const INVALID_CREDENTIALS = 'Invalid email or password';
export const INVALID_RESET = 'Invalid or expired reset link';
export const RESET_VALID_MS = 60 * 60_000;
export const SETUP_DONE = 'An account already exists; sign in instead';

/** Databases known to hold a user. Users are never deleted, so once true it stays true. */
const usersSeen = new WeakSet<DbHandles>();

/**
 * Whether any user exists: one query until the answer is yes, then none (first-run setup and its
 * check must cost nothing once the service is set up).
 */
export async function anyUserExists(db: DbHandles): Promise<boolean> {
  if (usersSeen.has(db)) return true;
  if ((await store.countUsers(db.writes)) === 0) return false;
  usersSeen.add(db);
  return true;
}

export interface Credentials {
  email: string;
  password: string;
}

/** `{email, password}` as sign-in takes it: both present and strings, else 400. */
export function credentialsOf(body: unknown): Credentials {
  return parseInput(SignInInput, body);
}

/**
 * The account for these credentials, or null. An unknown email, a user without a password, a
 * disabled user and a wrong password all cost one argon2 verification and all give null, so the
 * answer and its time say nothing about which it was.
 */
export async function signIn(db: DbHandles, { email, password }: Credentials): Promise<AccountDto | null> {
  const user = email.length <= 320 && password.length <= 1024 ? await store.userByEmail(db.writes, email) : null;
  const ok = await verifyPassword(user?.passwordHash, password.slice(0, 1024));
  if (!user || !ok || user.disabledAt) return null;
  return toAccount(user);
}

/** `{email, name, password}` of a new account (setup, sign-up, the admins' Users page). */
export function newAccountOf(body: unknown, passwordRequired = true): { email: string; name: string | null; password: string | undefined } {
  return passwordRequired ? parseInput(NewAccountInput, body) : parseInput(AccountByAdminInput, body);
}

/** A user an admin adds: a new account (password optional) and its role (default member). */
export function userByAdminOf(body: unknown): { email: string; name: string | null; password: string | undefined; role: 'admin' | 'member' } {
  return parseInput(UserByAdminInput, body);
}

/**
 * "Create the first account": only while no user exists, and that account is an
 * admin. The caller has already seen no user (`anyUserExists`). The password is hashed before any
 * lock; then a named database lock, taken without waiting, makes two concurrent attempts create
 * one account: the count and the insert run on the locked connection, and an attempt that finds
 * the lock taken is told at once that the first account is being made (409).
 */
export async function setupFirstAccount(db: DbHandles, lockName: string, body: unknown): Promise<AccountDto> {
  const { email, name, password } = newAccountOf(body);
  checkEmail(email);
  const row = newUserRow(email, name, await hashPassword(password!), 'admin');
  const locked = await tryNamedLock(db.pool, lockName, async (sql) => {
    if ((await store.countUsers(sql)) > 0) return false;
    await store.insertUser(sql, row);
    return true;
  });
  // Another attempt holds the lock right now: it is making the first account.
  if (!locked.got) throw new AppError('CONFLICT', SETUP_DONE);
  usersSeen.add(db);
  if (!locked.value) throw new AppError('CONFLICT', SETUP_DONE);
  return toAccount(row);
}

/** `{currentPassword, newPassword, revokeCredentials}` of a password change (`revokeCredentials` defaults to true). */
export function passwordChangeOf(body: unknown): { currentPassword: string; newPassword: string; revokeCredentials: boolean } {
  return parseInput(PasswordChangeInput, body);
}

/** `{token, password, revokeCredentials}` of a password reset (`revokeCredentials` defaults to true). */
export function passwordResetOf(body: unknown): { token: string; password: string; revokeCredentials: boolean } {
  return parseInput(PasswordResetInput, body);
}

/**
 * What a new password ends besides browser sessions: unless the person chose to keep them, every
 * API key and device token of the user (a password that leaked may have been used to make them).
 * Keys and device tokens created with those are the user's too, so they go in the same statement.
 */
async function afterNewPassword(db: DbHandles, userId: string, revokeCredentials: boolean, keepSessionHash?: string): Promise<void> {
  await deleteSessionsOfUser(db.writes, userId, keepSessionHash);
  if (revokeCredentials) await revokeKeysOfUser(db.writes, userId, new Date());
}

/**
 * Changes a password after checking the current one; every other browser session of the user
 * ends, and (unless `revokeCredentials: false`) every API key and device token.
 */
export async function changePassword(db: DbHandles, userId: string, body: unknown, keepSessionHash?: string): Promise<void> {
  const { currentPassword, newPassword, revokeCredentials } = passwordChangeOf(body);
  const user = await store.userById(db.writes, userId);
  if (!user || !(await verifyPassword(user.passwordHash, currentPassword.slice(0, 1024)))) {
    throw new AppError('FORBIDDEN', 'Current password is incorrect');
  }
  await store.setPasswordHash(db.writes, userId, await hashPassword(newPassword));
  await afterNewPassword(db, userId, revokeCredentials, keepSessionHash);
}

/** A one-time password reset link `<base>/reset-password?token=…`, valid one hour. */
export async function createResetLink(db: DbHandles, userId: string, base: string): Promise<{ link: string; expiresAt: string }> {
  const token = randomToken();
  const expiresAt = new Date(Date.now() + RESET_VALID_MS);
  await store.insertPasswordReset(db.writes, sha256(token), userId, expiresAt);
  return { link: `${base.replace(/\/+$/, '')}/reset-password?token=${token}`, expiresAt: expiresAt.toISOString() };
}

/**
 * Sets a password through a reset link: the link must be unused, under an hour old, and its user
 * not disabled; it is spent atomically (one of two concurrent uses wins). All of the user's
 * browser sessions end, and (unless `revokeCredentials: false`) every API key and device token.
 */
export async function resetPassword(db: DbHandles, body: unknown): Promise<AccountDto> {
  const { token, password, revokeCredentials } = passwordResetOf(body);
  const tokenHash = sha256(token);
  const now = new Date();
  if (!(await store.spendPasswordReset(db.writes, tokenHash, now))) throw invalid(INVALID_RESET);
  const user = await store.userOfPasswordReset(db.writes, tokenHash);
  if (!user || user.disabledAt) throw invalid(INVALID_RESET);
  await store.setPasswordHash(db.writes, user.id, await hashPassword(password));
  await afterNewPassword(db, user.id, revokeCredentials);
  return toAccount(user);
}
