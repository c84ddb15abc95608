import { revokeKeysOfUser } from '../data/api-keys';
import { deleteSessionsOfUser } from '../data/browser-sessions';
import { tryNamedLock } from '../data/locks';
import * as store from '../data/users';
import type { DbHandles } from '../db/client';
import { hashPassword, verifyPassword } from '../domain/passwords';
import { randomToken, sha256 } from '../domain/tokens';
import { AppError, invalid } from '../errors';
import { requireWriteAccess } from './access';
import { recordAudit } from './audit';
import { browserSessionOf, endSessionsOfUser, startBrowserSession } from './browser-sessions';
import type { AnyCtx, Ctx, PublicCtx } from './context';
import * as teams from './teams';
import { accountOf, checkEmail, createUser, getAdminUser, insertAccountRow, newAccountRow, newUserRow, requireAccountAdmin, userNotFound } from './users';
import { presentAccount, type AccountDto, type AdminUserDto } from './presenters/user';
import { InvitationToken, NewAccountInput, PasswordChangeInput, PasswordResetInput, SignInInput, UserByAdminInput } from './account-inputs';
import { parseInput } from '../domain/inputs';

export const INVALID_CREDENTIALS = 'Invalid email or password';
export const INVALID_RESET = 'Invalid or expired reset link';
const RESET_VALID_MS = 60 * 60_000;
export const SETUP_DONE = 'An account already exists; sign in instead';

/** Databases known to hold a user. Users are never deleted, so once true it stays true. */
const usersSeen = new WeakSet<DbHandles>();

/**
 * Whether any user exists: one query until the answer is yes, then none (first-run setup and its
 * check must cost nothing once the service is set up).
 */
export async function anyUserExists(ctx: AnyCtx): Promise<boolean> {
  const { db } = ctx.deps;
  if (usersSeen.has(db)) return true;
  if ((await store.countUsers(db.writes)) === 0) return false;
  usersSeen.add(db);
  return true;
}

interface Credentials {
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
export async function signIn(ctx: AnyCtx, { email, password }: Credentials): Promise<AccountDto | null> {
  const user = email.length <= 320 && password.length <= 1024 ? await store.userByEmail(ctx.deps.db.writes, email) : null;
  const ok = await verifyPassword(user?.passwordHash, password.slice(0, 1024));
  const failed = !user || !ok || user.disabledAt;
  const reason = !user ? 'unknown email' : !ok ? 'wrong password' : 'disabled';
  await recordAudit(ctx, {
    action: 'sign_in',
    target: { type: 'user', id: user?.id },
    actorUserId: user?.id ?? null,
    result: failed ? 'failure' : 'success',
    ...(failed ? { detail: { reason } } : {}),
  });
  if (failed) return null;
  return presentAccount(user);
}

/** `{email, name, password}` of a new account (setup, sign-up). */
export function newAccountOf(body: unknown): { email: string; name: string | null; password: string } {
  return parseInput(NewAccountInput, body);
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
export async function setupFirstAccount(ctx: PublicCtx, body: unknown): Promise<SignedIn> {
  const { db, config } = ctx.deps;
  const { email, name, password } = newAccountOf(body);
  checkEmail(email);
  const row = newUserRow(email, name, await hashPassword(password), 'admin');
  const locked = await tryNamedLock(db.pool, `${config.namespace}:setup`, async (sql) => {
    if ((await store.countUsers(sql)) > 0) return false;
    await store.insertUser(sql, row);
    return true;
  });
  // Another attempt holds the lock right now: it is making the first account.
  if (!locked.got) throw new AppError('CONFLICT', SETUP_DONE);
  usersSeen.add(db);
  if (!locked.value) throw new AppError('CONFLICT', SETUP_DONE);
  await recordAudit(ctx, { action: 'user.create', target: { type: 'user', id: row.id }, actorUserId: row.id, detail: { via: 'setup', role: 'admin' } });
  const user = presentAccount(row);
  return { user, session: await startBrowserSession(ctx, user.id) };
}

/** What the sign-in page needs to know: whether the first account is still to be made, whether sign-up is on. */
export async function setupState(ctx: PublicCtx): Promise<{ needsSetup: boolean; signupEnabled: boolean }> {
  return { needsSetup: !(await anyUserExists(ctx)), signupEnabled: ctx.deps.config.signupEnabled };
}

/** A new account signed in: the account and its browser session's tokens (the cookie's, never stored, and the CSRF token). */
interface SignedIn {
  user: AccountDto;
  session: { token: string; csrfToken: string };
}

/** `invitationToken` of a sign-up body, when it carries one. */
const invitationTokenOf = (b: unknown): string | null =>
  InvitationToken.parse(b && typeof b === 'object' ? (b as { invitationToken?: unknown }).invitationToken : undefined);

/**
 * Sign-up: a new member account, signed in at once. Only with sign-up on (`SIGNUP_ENABLED`; off →
 * 403 `Sign-up is disabled`), except with an invitation to a team: its holder may create an account
 * even with sign-up off (for the invitation's email when it names one), and joins the team with it.
 * `beforeCreate` runs once the body is well-formed, before anything is written (the door counts
 * each such attempt against the address: a taken email too, which bounds probing for accounts).
 */
export async function signUp(ctx: PublicCtx, body: unknown, beforeCreate?: () => Promise<void>): Promise<SignedIn> {
  const invitationToken = invitationTokenOf(body);
  const invitation = invitationToken ? await teams.openInvitation(ctx, invitationToken) : null;
  if (!ctx.deps.config.signupEnabled && !invitation) throw new AppError('FORBIDDEN', 'Sign-up is disabled');
  const { email, name, password } = newAccountOf(body);
  if (invitation) teams.checkInvitationEmail(invitation, email);
  await beforeCreate?.();
  const row = await newAccountRow(ctx, email, name, { password, role: 'member' });
  const user = presentAccount(row);
  // With an invitation, the account is made in the transaction that spends it (after the spend).
  if (invitationToken) await teams.joinWithInvitation(ctx, invitationToken, user, (tx) => insertAccountRow(tx, row));
  else await insertAccountRow(ctx.deps.db.writes, row);
  await recordAudit(ctx, { action: 'user.create', target: { type: 'user', id: row.id }, actorUserId: row.id, detail: { via: 'sign-up', role: 'member' } });
  return { user, session: await startBrowserSession(ctx, user.id) };
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
export async function changePassword(ctx: Ctx, body: unknown): Promise<void> {
  requireWriteAccess(ctx);
  const { db } = ctx.deps;
  const { id: userId, sessionTokenHash: keepSessionHash } = ctx.user;
  const { currentPassword, newPassword, revokeCredentials } = passwordChangeOf(body);
  const user = await store.userById(db.writes, userId);
  const target = { type: 'user' as const, id: userId };
  if (!user || !(await verifyPassword(user.passwordHash, currentPassword.slice(0, 1024)))) {
    await recordAudit(ctx, { action: 'password.change', target, result: 'failure', detail: { reason: 'wrong current password' } });
    throw new AppError('FORBIDDEN', 'Current password is incorrect');
  }
  await store.setPasswordHash(db.writes, userId, await hashPassword(newPassword));
  await afterNewPassword(db, userId, revokeCredentials, keepSessionHash);
  await recordAudit(ctx, { action: 'password.change', target, detail: { revokeCredentials } });
}

/**
 * A one-time password reset link `<base>/reset-password?token=…`, valid one hour, for a user: made
 * by an admin or the operator (403 for anyone else), 404 `User not found` for no such user.
 */
export async function createResetLink(ctx: AnyCtx, userId: string, base: string): Promise<{ link: string; expiresAt: string }> {
  requireAccountAdmin(ctx);
  requireWriteAccess(ctx);
  const { db } = ctx.deps;
  if (!(await store.userById(db.writes, userId))) throw userNotFound();
  const token = randomToken();
  const expiresAt = new Date(Date.now() + RESET_VALID_MS);
  await store.insertPasswordReset(db.writes, sha256(token), userId, expiresAt);
  await recordAudit(ctx, { action: 'password.reset_request', target: { type: 'user', id: userId } });
  return { link: `${base.replace(/\/+$/, '')}/reset-password?token=${token}`, expiresAt: expiresAt.toISOString() };
}

/**
 * Sets a password through a reset link: the link must be unused, under an hour old, and its user
 * not disabled; it is spent atomically (one of two concurrent uses wins). All of the user's
 * browser sessions end, and (unless `revokeCredentials: false`, or this is the account's first
 * password) every API key and device token.
 */
export async function resetPassword(ctx: AnyCtx, body: unknown): Promise<AccountDto> {
  const { db } = ctx.deps;
  const { token, password, revokeCredentials } = passwordResetOf(body);
  const tokenHash = sha256(token);
  const now = new Date();
  const spent = await store.spendPasswordReset(db.writes, tokenHash, now);
  const user = spent ? await store.userOfPasswordReset(db.writes, tokenHash) : null;
  if (!user || user.disabledAt) {
    await recordAudit(ctx, {
      action: 'password.reset',
      target: { type: 'user', id: user?.id },
      actorUserId: user?.id ?? null,
      result: 'failure',
      detail: { reason: 'invalid or expired link' },
    });
    throw invalid(INVALID_RESET);
  }
  await store.setPasswordHash(db.writes, user.id, await hashPassword(password));
  // A first password (an account made without one, through its set-password link) revokes no key or
  // client: there was no password that could have leaked, and the keys made meanwhile are the owner's.
  await afterNewPassword(db, user.id, revokeCredentials && user.passwordHash !== null);
  await recordAudit(ctx, {
    action: 'password.reset',
    target: { type: 'user', id: user.id },
    actorUserId: user.id,
    detail: { firstPassword: user.passwordHash === null },
  });
  return presentAccount(user);
}

/**
 * An admin adds a user (the console's Users page; the operator may too): a new account, and when
 * it has no password a reset link (valid one hour) through which the user sets one.
 */
export async function addUser(ctx: AnyCtx, body: unknown, linkBase: string): Promise<{ user: AdminUserDto; link?: string; expiresAt?: string }> {
  requireAccountAdmin(ctx);
  requireWriteAccess(ctx);
  const { email, name, password, role } = userByAdminOf(body);
  const created = await createUser(ctx, email, name, { password, role });
  const user = await getAdminUser(ctx, created.id);
  const reset = password ? {} : await createResetLink(ctx, created.id, linkBase);
  return { user, ...reset };
}

/** Signs the caller out of every browser (their keys and device tokens stay). */
export async function signOutEverywhere(ctx: Ctx): Promise<void> {
  await endSessionsOfUser(ctx, ctx.user.id);
}

/** The signed-in account a browser's cookie names, with its CSRF token; null when the session is over or its user disabled. */
export async function currentAccount(ctx: PublicCtx, cookieToken: string): Promise<{ user: AccountDto; csrfToken: string } | null> {
  const session = await browserSessionOf(ctx, cookieToken);
  const user = session && (await accountOf(ctx, session.userId));
  return session && user ? { user, csrfToken: session.csrfToken } : null;
}
