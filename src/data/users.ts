/** The users store (table `users`) and the password resets that belong to a user. */
import type { UserModel } from '../generated/prisma/models';
import { marks, type Sql } from './sql';
import type { DriverRow } from '../domain/driver-row';

/** A user's row (prisma/schema.prisma's `User`, as the driver returns it): every column. passwordHash is null until a password is set; role "admin" or "member". */
export type UserRow = DriverRow<UserModel>;

const USER_COLUMNS = 'id, email, name, createdAt, passwordHash, role, disabledAt';

export async function userById(db: Sql, id: string): Promise<UserRow | undefined> {
  return (await db.query<UserRow>(`SELECT ${USER_COLUMNS} FROM users WHERE id = ?`, id))[0];
}

export async function userByEmail(db: Sql, email: string): Promise<UserRow | undefined> {
  return (await db.query<UserRow>(`SELECT ${USER_COLUMNS} FROM users WHERE email = ?`, email))[0];
}

/** Every user, oldest first. */
export function allUsers(db: Sql): Promise<UserRow[]> {
  return db.query<UserRow>(`SELECT ${USER_COLUMNS} FROM users ORDER BY createdAt ASC, id ASC`);
}

export async function countUsers(db: Sql): Promise<number> {
  const [{ n }] = await db.query<{ n: number }>('SELECT COUNT(*) AS n FROM users');
  return n;
}

/** Inserts a user; a taken email is a duplicate key (src/data/errors.ts). */
export async function insertUser(db: Sql, u: UserRow): Promise<void> {
  await db.execute(
    `INSERT INTO users (${USER_COLUMNS}) VALUES (${marks(7)})`,
    u.id,
    u.email,
    u.name,
    u.createdAt,
    u.passwordHash,
    u.role,
    u.disabledAt,
  );
}

export async function setUserDisabledAt(db: Sql, id: string, disabledAt: Date | null): Promise<void> {
  await db.execute('UPDATE users SET disabledAt = ? WHERE id = ?', disabledAt, id);
}

/**
 * The user's row and every administrator's, locked for the rest of the transaction in one order
 * (two deletions at once cannot both take the last administrators away, nor deadlock).
 */
export function lockUserAndAdmins(tx: Sql, id: string): Promise<Array<Pick<UserRow, 'id' | 'email' | 'role' | 'disabledAt'>>> {
  return tx.query(`SELECT id, email, role, disabledAt FROM users WHERE id = ? OR role = 'admin' ORDER BY id FOR UPDATE`, id);
}

/** Deletes the user; their browser sessions, resets, device codes, keys, memberships, webhooks and share links cascade. */
export async function deleteUserRow(tx: Sql, id: string): Promise<void> {
  await tx.execute('DELETE FROM users WHERE id = ?', id);
}

export async function setPasswordHash(db: Sql, id: string, passwordHash: string): Promise<void> {
  await db.execute('UPDATE users SET passwordHash = ? WHERE id = ?', passwordHash, id);
}

// ---------------------------------------------------------------------------------------------
// Password resets (table `password_resets`): one-time links, kept as sha256 of their token

export async function insertPasswordReset(db: Sql, tokenHash: string, userId: string, expiresAt: Date): Promise<void> {
  await db.execute('INSERT INTO password_resets (tokenHash, userId, createdAt, expiresAt) VALUES (?, ?, ?, ?)', tokenHash, userId, new Date(), expiresAt);
}

/** Marks an unused, unexpired reset used (atomically: of two concurrent uses one wins); true when this call did. */
export async function spendPasswordReset(db: Sql, tokenHash: string, now: Date): Promise<boolean> {
  const n = await db.execute('UPDATE password_resets SET usedAt = ? WHERE tokenHash = ? AND usedAt IS NULL AND expiresAt > ?', now, tokenHash, now);
  return n === 1;
}

/** The user a reset link belongs to. */
export async function userOfPasswordReset(db: Sql, tokenHash: string): Promise<UserRow | undefined> {
  const rows = await db.query<UserRow>(
    `SELECT u.id, u.email, u.name, u.createdAt, u.passwordHash, u.role, u.disabledAt
       FROM password_resets r JOIN users u ON u.id = r.userId WHERE r.tokenHash = ?`,
    tokenHash,
  );
  return rows[0];
}
