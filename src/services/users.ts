import crypto from 'node:crypto';
import { deleteSessionsOfUser } from '../data/browser-sessions';
import { isDuplicateKey } from '../data/errors';
import * as store from '../data/users';
import type { UserRow } from '../data/users';
import type { Sql } from '../data/sql';
import { hashPassword } from '../domain/passwords';
import { sentText } from '../domain/text';
import { AppError, invalid } from '../errors';
import { requireWriteAccess } from './access';
import { recordAudit } from './audit';
import { isUserCtx, type AnyCtx, type OperatorCtx } from './context';
import type { Role } from '../domain/roles';
import { presentAccount, presentAdminUser, presentNewUser, type AccountDto, type AdminUserDto, type UserDto } from './presenters/user';

export const EMAIL_RE = /^[^\s@]+@[^\s@]+$/;

export function checkEmail(email: unknown): string {
  if (email === undefined || email === null || email === '') throw invalid('Missing required field: email');
  if (typeof email !== 'string' || !EMAIL_RE.test(email) || email.length > 320) throw invalid(`Invalid email: ${sentText(email).slice(0, 320)}`);
  return email;
}

interface NewUser {
  password?: string;
  role?: Role;
}

/** The row of a new user (email and name already checked). */
export function newUserRow(email: string, name: string | null | undefined, passwordHash: string | null, role: Role = 'member'): UserRow {
  return { id: crypto.randomUUID(), email, name: name || null, createdAt: new Date(), passwordHash, role, disabledAt: null };
}

/**
 * Managing accounts (the console's Users page, the admin CLI) is for an admin user or the
 * operator; anyone else → 403.
 */
export function requireAccountAdmin(ctx: AnyCtx): void {
  if (isUserCtx(ctx) ? ctx.user.role === 'admin' : ctx.caller === 'operator') return;
  throw new AppError('FORBIDDEN', "Only the service's administrators can manage accounts");
}

export const userNotFound = () => new AppError('NOT_FOUND', 'User not found');

/** Creates a user (an admin or the operator; the password, when given, already checked for length). */
export async function createUser(ctx: AnyCtx, email: string, name?: string | null, opts: NewUser = {}): Promise<UserDto & AccountDto> {
  requireAccountAdmin(ctx);
  requireWriteAccess(ctx);
  const user = await insertNewUser(ctx, email, name, opts);
  await recordAudit(ctx, { action: 'user.create', target: { type: 'user', id: user.id }, detail: { role: opts.role ?? 'member' } });
  return user;
}

/** The insert behind every way an account comes to be (an admin, sign-up, an invitation); the caller applied its rule. */
async function insertNewUser(ctx: AnyCtx, email: string, name?: string | null, opts: NewUser = {}): Promise<UserDto & AccountDto> {
  const row = await newAccountRow(ctx, email, name, opts);
  await insertAccountRow(ctx.deps.db.writes, row);
  return presentNewUser(row);
}

/**
 * A new account's row, checked (email, name, not taken yet) and its password hashed, not yet
 * inserted: for a caller that inserts it inside a transaction of its own (`insertAccountRow`).
 */
export async function newAccountRow(ctx: AnyCtx, email: string, name?: string | null, opts: NewUser = {}): Promise<UserRow> {
  checkEmail(email);
  if (name !== undefined && name !== null && (typeof name !== 'string' || name.length > 255))
    throw invalid('Invalid value for name. Must be at most 255 characters');
  if (await store.userByEmail(ctx.deps.db.writes, email)) throw emailTaken(email);
  const passwordHash = opts.password ? await hashPassword(opts.password) : null;
  return newUserRow(email, name, passwordHash, opts.role);
}

/** Inserts a row from `newAccountRow`; an email taken meanwhile → 409. */
export async function insertAccountRow(db: Sql, row: UserRow): Promise<void> {
  try {
    await store.insertUser(db, row);
  } catch (err) {
    if (isDuplicateKey(err)) throw emailTaken(row.email);
    throw err;
  }
}

const emailTaken = (email: string) => new AppError('CONFLICT', `A user with email ${email} already exists`);

/** The operator finds a user by email (the admin CLI names users by email). */
export async function findUserByEmail(ctx: OperatorCtx, email: string): Promise<(UserDto & AccountDto) | null> {
  const row = await store.userByEmail(ctx.deps.db.writes, email);
  return row ? presentNewUser(row) : null;
}

/** A user as an admin sees it (the Users page); an admin or the operator only; unknown → 404 `User not found`. */
export async function getAdminUser(ctx: AnyCtx, userId: string): Promise<AdminUserDto> {
  requireAccountAdmin(ctx);
  const row = await store.userById(ctx.deps.db.writes, userId);
  if (!row) throw userNotFound();
  return presentAdminUser(row);
}

/** The account of a user who is signed in (null once disabled). */
export async function accountOf(ctx: AnyCtx, userId: string): Promise<AccountDto | null> {
  const row = await store.userById(ctx.deps.db.writes, userId);
  return row && !row.disabledAt ? presentAccount(row) : null;
}

/** Every user, for an admin or the operator. */
export async function listUsers(ctx: AnyCtx): Promise<AdminUserDto[]> {
  requireAccountAdmin(ctx);
  return (await store.allUsers(ctx.deps.db.writes)).map(presentAdminUser);
}

/**
 * Disables (or enables) a user: an admin or the operator; an admin cannot disable their own account
 * (400). Disabling ends the user's browser sessions here; their keys and device tokens are refused
 * from the next request on, because every authentication reads the user row.
 */
export async function setUserDisabled(ctx: AnyCtx, userId: string, disabled: boolean): Promise<AdminUserDto> {
  requireAccountAdmin(ctx);
  requireWriteAccess(ctx);
  if (disabled && isUserCtx(ctx) && userId === ctx.user.id) throw invalid('You cannot disable your own account');
  const { db } = ctx.deps;
  const row = await store.userById(db.writes, userId);
  if (!row) throw new AppError('NOT_FOUND', 'User not found', { userId });
  if (disabled === Boolean(row.disabledAt)) return presentAdminUser(row);
  const disabledAt = disabled ? new Date() : null;
  await store.setUserDisabledAt(db.writes, userId, disabledAt);
  if (disabled) await deleteSessionsOfUser(db.writes, userId);
  await recordAudit(ctx, { action: disabled ? 'user.disable' : 'user.enable', target: { type: 'user', id: userId } });
  return presentAdminUser({ ...row, disabledAt });
}
