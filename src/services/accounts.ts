import type * as mariadb from 'mariadb';
import type { PrismaClient } from '../generated/prisma/client';
import { AppError, invalid } from '../errors';
import { checkPassword, hashPassword, verifyPassword } from '../auth/passwords';
import { endSessionsOfUser, randomToken, sha256 } from '../auth/browser-sessions';
import { checkEmail, countUsers, createUser, toAccount, type AccountDto } from './users';
import { isPlainObject } from './validation';

export const INVALID_CREDENTIALS = 'Invalid email or password';
export const INVALID_RESET = 'Invalid or expired reset link';
export const RESET_VALID_MS = 60 * 60_000;

export interface Credentials {
  email: string;
  password: string;
}

/** `{email, password}` as sign-in takes it: both present and strings, else 400. */
export function credentialsOf(body: unknown): Credentials {
  if (!isPlainObject(body)) throw invalid('Request body must be a JSON object');
  for (const f of ['email', 'password'] as const) {
    if (body[f] === undefined || body[f] === null || body[f] === '') throw invalid(`Missing required field: ${f}`);
    if (typeof body[f] !== 'string') throw invalid(`Invalid value for ${f}. Must be a string`);
  }
  return { email: body.email as string, password: body.password as string };
}

/**
 * The account for these credentials, or null. An unknown email, a user without a password, a
 * disabled user and a wrong password all cost one argon2 verification and all give null, so the
 * answer and its time say nothing about which it was.
 */
export async function signIn(prisma: PrismaClient, { email, password }: Credentials): Promise<AccountDto | null> {
  const user = email.length <= 320 && password.length <= 1024 ? await prisma.user.findUnique({ where: { email } }) : null;
  const ok = await verifyPassword(user?.passwordHash, password.slice(0, 1024));
  if (!user || !ok || user.disabledAt) return null;
  return toAccount(user);
}

/** `{email, name, password}` of a new account (setup, sign-up, the admins' Users page). */
export function newAccountOf(body: unknown, passwordRequired = true): { email: string; name: string | null; password: string | undefined } {
  if (!isPlainObject(body)) throw invalid('Request body must be a JSON object');
  const email = checkEmail(body.email);
  const name = body.name === undefined || body.name === null || body.name === '' ? null : body.name;
  if (name !== null && (typeof name !== 'string' || [...name].length > 255)) throw invalid('Invalid value for name. Must be a string of at most 255 characters');
  const password = passwordRequired || (body.password !== undefined && body.password !== null) ? checkPassword(body.password) : undefined;
  return { email, name, password };
}

/**
 * "Create the first account" (contract §10): only while no user exists, and that account is an
 * admin. A named database lock makes two concurrent attempts create one account, not two.
 */
export async function setupFirstAccount(pool: mariadb.Pool, prisma: PrismaClient, lockName: string, body: unknown): Promise<AccountDto> {
  const { email, name, password } = newAccountOf(body);
  const conn = await pool.getConnection();
  try {
    const [got] = await conn.query('SELECT GET_LOCK(?, 10) AS got', [lockName]);
    if (Number(got?.got) !== 1) throw new AppError('SERVICE_UNAVAILABLE', 'Service temporarily unavailable');
    try {
      if ((await countUsers(prisma)) > 0) throw new AppError('CONFLICT', 'An account already exists; sign in instead');
      const u = await createUser(prisma, email, name, { password, role: 'admin' });
      return { id: u.id, email: u.email, name: u.name, role: u.role };
    } finally {
      await conn.query('SELECT RELEASE_LOCK(?)', [lockName]).catch(() => undefined);
    }
  } finally {
    conn.release();
  }
}

/** Changes a password after checking the current one; every other browser session of the user ends. */
export async function changePassword(
  pool: mariadb.Pool,
  prisma: PrismaClient,
  userId: string,
  body: unknown,
  keepSessionHash?: string,
): Promise<void> {
  if (!isPlainObject(body)) throw invalid('Request body must be a JSON object');
  if (typeof body.currentPassword !== 'string' || body.currentPassword === '') throw invalid('Missing required field: currentPassword');
  const newPassword = checkPassword(body.newPassword, 'newPassword');
  const user = await prisma.user.findUnique({ where: { id: userId } });
  if (!user || !(await verifyPassword(user.passwordHash, body.currentPassword.slice(0, 1024)))) {
    throw new AppError('FORBIDDEN', 'Current password is incorrect');
  }
  await prisma.user.update({ where: { id: userId }, data: { passwordHash: await hashPassword(newPassword) } });
  await endSessionsOfUser(pool, userId, keepSessionHash);
}

/** A one-time password reset link `<base>/reset-password?token=…`, valid one hour. */
export async function createResetLink(prisma: PrismaClient, userId: string, base: string): Promise<{ link: string; expiresAt: string }> {
  const token = randomToken();
  const expiresAt = new Date(Date.now() + RESET_VALID_MS);
  await prisma.passwordReset.create({ data: { tokenHash: sha256(token), userId, expiresAt } });
  return { link: `${base.replace(/\/+$/, '')}/reset-password?token=${token}`, expiresAt: expiresAt.toISOString() };
}

/**
 * Sets a password through a reset link: the link must be unused, under an hour old, and its user
 * not disabled; it is spent atomically (one of two concurrent uses wins). All of the user's
 * browser sessions end.
 */
export async function resetPassword(pool: mariadb.Pool, prisma: PrismaClient, body: unknown): Promise<AccountDto> {
  if (!isPlainObject(body)) throw invalid('Request body must be a JSON object');
  if (typeof body.token !== 'string' || body.token === '') throw invalid('Missing required field: token');
  const password = checkPassword(body.password);
  const tokenHash = sha256(body.token);
  const now = new Date();
  const spent = await prisma.passwordReset.updateMany({
    where: { tokenHash, usedAt: null, expiresAt: { gt: now } },
    data: { usedAt: now },
  });
  if (spent.count !== 1) throw invalid(INVALID_RESET);
  const reset = await prisma.passwordReset.findUnique({ where: { tokenHash }, include: { user: true } });
  if (!reset || reset.user.disabledAt) throw invalid(INVALID_RESET);
  await prisma.user.update({ where: { id: reset.userId }, data: { passwordHash: await hashPassword(password) } });
  await endSessionsOfUser(pool, reset.userId);
  return toAccount(reset.user);
}
