import crypto from 'node:crypto';
import { deleteSessionsOfUser } from '../data/browser-sessions';
import { isDuplicateKey } from '../data/errors';
import * as store from '../data/users';
import type { UserRow } from '../data/users';
import type { DbHandles } from '../db/client';
import { hashPassword } from '../domain/passwords';
import { sentText } from '../domain/text';
import { AppError, invalid } from '../errors';

export type Role = 'admin' | 'member';

export interface UserDto {
  id: string;
  email: string;
  name: string | null;
  createdAt: string;
}

/** What the console shows of the signed-in user. */
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

export const EMAIL_RE = /^[^\s@]+@[^\s@]+$/;

export const roleOf = (role: string): Role => (role === 'admin' ? 'admin' : 'member');
export const toAccount = (u: UserRow): AccountDto => ({ id: u.id, email: u.email, name: u.name, role: roleOf(u.role) });
export const toAdminUser = (u: UserRow): AdminUserDto => ({
  ...toAccount(u),
  createdAt: u.createdAt.toISOString(),
  disabledAt: u.disabledAt ? u.disabledAt.toISOString() : null,
});

export function checkEmail(email: unknown): string {
  if (email === undefined || email === null || email === '') throw invalid('Missing required field: email');
  if (typeof email !== 'string' || !EMAIL_RE.test(email) || email.length > 320) throw invalid(`Invalid email: ${sentText(email).slice(0, 320)}`);
  return email;
}

export interface NewUser {
  password?: string;
  role?: Role;
}

/** The row of a new user (email and name already checked). */
export function newUserRow(email: string, name: string | null | undefined, passwordHash: string | null, role: Role = 'member'): UserRow {
  return { id: crypto.randomUUID(), email, name: name || null, createdAt: new Date(), passwordHash, role, disabledAt: null };
}

/** Creates a user (the password, when given, already checked for length by the caller). */
export async function createUser(db: DbHandles, email: string, name?: string | null, opts: NewUser = {}): Promise<UserDto & AccountDto> {
  checkEmail(email);
  if (name !== undefined && name !== null && (typeof name !== 'string' || name.length > 255))
    throw invalid('Invalid value for name. Must be at most 255 characters');
  const existing = await store.userByEmail(db.writes, email);
  if (existing) throw new AppError('CONFLICT', `A user with email ${email} already exists`);
  const passwordHash = opts.password ? await hashPassword(opts.password) : null;
  const row = newUserRow(email, name, passwordHash, opts.role);
  try {
    await store.insertUser(db.writes, row);
  } catch (err) {
    if (isDuplicateKey(err)) throw new AppError('CONFLICT', `A user with email ${email} already exists`);
    throw err;
  }
  return { ...toAccount(row), createdAt: row.createdAt.toISOString() };
}

export async function findUserByEmail(db: DbHandles, email: string): Promise<(UserDto & AccountDto) | null> {
  const row = await store.userByEmail(db.writes, email);
  return row ? { ...toAccount(row), createdAt: row.createdAt.toISOString() } : null;
}

/** The user as an admin sees it (the Users page), or null. */
export async function getAdminUser(db: DbHandles, userId: string): Promise<AdminUserDto | null> {
  const row = await store.userById(db.writes, userId);
  return row ? toAdminUser(row) : null;
}

export async function getAccount(db: DbHandles, userId: string): Promise<AccountDto | null> {
  const row = await store.userById(db.writes, userId);
  return row && !row.disabledAt ? toAccount(row) : null;
}

export async function listUsers(db: DbHandles): Promise<AdminUserDto[]> {
  return (await store.allUsers(db.writes)).map(toAdminUser);
}

/**
 * Disables (or enables) a user. Disabling ends their browser sessions here; their keys and device
 * tokens are refused from the next request on, because every authentication reads the user row.
 */
export async function setUserDisabled(db: DbHandles, userId: string, disabled: boolean): Promise<AdminUserDto> {
  const row = await store.userById(db.writes, userId);
  if (!row) throw new AppError('NOT_FOUND', 'User not found', { userId });
  if (disabled === Boolean(row.disabledAt)) return toAdminUser(row);
  const disabledAt = disabled ? new Date() : null;
  await store.setUserDisabledAt(db.writes, userId, disabledAt);
  if (disabled) await deleteSessionsOfUser(db.writes, userId);
  return toAdminUser({ ...row, disabledAt });
}

export function countUsers(db: DbHandles): Promise<number> {
  return store.countUsers(db.writes);
}
