/** The device codes store (table `device_codes`): one-time codes of the device login, kept as sha256. */
import type { UserRow } from './users';
import type { Sql } from './sql';

export async function deleteExpiredDeviceCodes(db: Sql, now: Date): Promise<void> {
  await db.execute('DELETE FROM device_codes WHERE expiresAt < ?', now);
}

/**
 * Inserts a code; a live code with the same hash is a duplicate key (src/data/errors.ts).
 * `parentKeyId`: the key or device token that asked for it (null: a browser session).
 */
interface NewDeviceCode {
  codeHash: string;
  userId: string;
  createdAt: Date;
  expiresAt: Date;
  parentKeyId: string | null;
  /** When the credential that asked for it ends, when sooner than its key row (a device access token); null: as the row. */
  parentExpiresAt?: Date | null;
  /** The team the code's token uploads to (null: personal). */
  teamId?: string | null;
}

export async function insertDeviceCode(
  db: Sql,
  { codeHash, userId, createdAt, expiresAt, parentKeyId, parentExpiresAt = null, teamId = null }: NewDeviceCode,
): Promise<void> {
  await db.execute(
    'INSERT INTO device_codes (codeHash, userId, createdAt, expiresAt, parentKeyId, parentExpiresAt, teamId) VALUES (?, ?, ?, ?, ?, ?, ?)',
    codeHash,
    userId,
    createdAt,
    expiresAt,
    parentKeyId,
    parentExpiresAt,
    teamId,
  );
}

/** Marks an unused, unexpired code used (atomically: of two concurrent exchanges one wins); true when this call did. */
export async function spendDeviceCode(db: Sql, codeHash: string, now: Date): Promise<boolean> {
  const n = await db.execute('UPDATE device_codes SET usedAt = ? WHERE codeHash = ? AND usedAt IS NULL AND expiresAt > ?', now, codeHash, now);
  return n === 1;
}

interface DeviceCodeRow {
  userId: string;
  usedAt: Date | null;
  expiresAt: Date;
  /** The key or device token that asked for the code; null for a browser session. */
  parentKeyId: string | null;
  /** When the credential that asked for it ends, when sooner than its key row (a device access token). */
  parentExpiresAt: Date | null;
  /** The team whose projects a client logged in with it creates (null: the user's own). */
  teamId: string | null;
  user: Pick<UserRow, 'email' | 'disabledAt'>;
}

/** The code with its user. */
export async function deviceCodeWithUser(db: Sql, codeHash: string): Promise<DeviceCodeRow | undefined> {
  const rows = await db.query<Omit<DeviceCodeRow, 'user'> & { email: string; disabledAt: Date | null }>(
    `SELECT c.userId, c.usedAt, c.expiresAt, c.parentKeyId, c.parentExpiresAt, c.teamId, u.email, u.disabledAt
       FROM device_codes c JOIN users u ON u.id = c.userId WHERE c.codeHash = ?`,
    codeHash,
  );
  const r = rows[0];
  return (
    r && {
      userId: r.userId,
      usedAt: r.usedAt,
      expiresAt: r.expiresAt,
      parentKeyId: r.parentKeyId,
      parentExpiresAt: r.parentExpiresAt,
      teamId: r.teamId,
      user: { email: r.email, disabledAt: r.disabledAt },
    }
  );
}
