import crypto from 'node:crypto';
import type * as mariadb from 'mariadb';
import type { PrismaClient } from '../generated/prisma/client';
import { AppError, invalid } from '../errors';
import { hashPassword } from '../auth/passwords';
import { endSessionsOfUser } from '../auth/browser-sessions';

export type Role = 'admin' | 'member';

export interface UserDto {
  id: string;
  email: string;
  name: string | null;
  createdAt: string;
}

/** What the console shows of the signed-in user (contract §10). */
export interface AccountDto {
  id: string;
  email: string;
  name: string | null;
  role: Role;
}

/** An admin's view of a user (the Users page). */
export interface AdminUserDto extends AccountDto {
  createdAt: string;
  disabledAt: string | null;
}

interface UserRow {
  id: string;
  email: string;
  name: string | null;
  createdAt: Date;
  role: string;
  disabledAt: Date | null;
}

const EMAIL_RE = /^[^\s@]+@[^\s@]+$/;

export const roleOf = (role: string): Role => (role === 'admin' ? 'admin' : 'member');
export const toAccount = (u: UserRow): AccountDto => ({ id: u.id, email: u.email, name: u.name, role: roleOf(u.role) });
export const toAdminUser = (u: UserRow): AdminUserDto => ({
  ...toAccount(u),
  createdAt: u.createdAt.toISOString(),
  disabledAt: u.disabledAt ? u.disabledAt.toISOString() : null,
});

export function checkEmail(email: unknown): string {
  if (email === undefined || email === null || email === '') throw invalid('Missing required field: email');
  if (typeof email !== 'string' || !EMAIL_RE.test(email) || email.length > 320) throw invalid(`Invalid email: ${String(email).slice(0, 320)}`);
  return email;
}

export interface NewUser {
  password?: string;
  role?: Role;
}

/** Creates a user (the password, when given, already checked for length by the caller). */
export async function createUser(prisma: PrismaClient, email: string, name?: string | null, opts: NewUser = {}): Promise<UserDto & AccountDto> {
  checkEmail(email);
  if (name !== undefined && name !== null && (typeof name !== 'string' || name.length > 255)) throw invalid('Invalid value for name. Must be at most 255 characters');
  const existing = await prisma.user.findUnique({ where: { email } });
  if (existing) throw new AppError('CONFLICT', `A user with email ${email} already exists`);
  const passwordHash = opts.password ? await hashPassword(opts.password) : null;
  try {
    const row = await prisma.user.create({
      data: { id: crypto.randomUUID(), email, name: name || null, passwordHash, role: opts.role ?? 'member' },
    });
    return { ...toAccount(row), createdAt: row.createdAt.toISOString() };
  } catch (err) {
    if ((err as { code?: string }).code === 'P2002') throw new AppError('CONFLICT', `A user with email ${email} already exists`);
    throw err;
  }
}

export async function findUserByEmail(prisma: PrismaClient, email: string): Promise<(UserDto & AccountDto) | null> {
  const row = await prisma.user.findUnique({ where: { email } });
  return row && { ...toAccount(row), createdAt: row.createdAt.toISOString() };
}

export async function getAccount(prisma: PrismaClient, userId: string): Promise<AccountDto | null> {
  const row = await prisma.user.findUnique({ where: { id: userId } });
  return row && !row.disabledAt ? toAccount(row) : null;
}

export async function listUsers(prisma: PrismaClient): Promise<AdminUserDto[]> {
  const rows = await prisma.user.findMany({ orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] });
  return rows.map(toAdminUser);
}

/**
 * Disables (or enables) a user. Disabling ends their browser sessions here; their keys and device
 * tokens are refused from the next request on, because every authentication reads the user row.
 */
export async function setUserDisabled(pool: mariadb.Pool, prisma: PrismaClient, userId: string, disabled: boolean): Promise<AdminUserDto> {
  const row = await prisma.user.findUnique({ where: { id: userId } });
  if (!row) throw new AppError('NOT_FOUND', 'User not found', { userId });
  if (disabled === Boolean(row.disabledAt)) return toAdminUser(row);
  const updated = await prisma.user.update({ where: { id: userId }, data: { disabledAt: disabled ? new Date() : null } });
  if (disabled) await endSessionsOfUser(pool, userId);
  return toAdminUser(updated);
}

export async function countUsers(prisma: PrismaClient): Promise<number> {
  return prisma.user.count();
}
