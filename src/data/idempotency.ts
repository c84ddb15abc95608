/** The Idempotency-Key store (table `idempotency_keys`): a claim per user and key, then the response kept. */
import type { Sql } from './sql';

export interface IdempotencyClaim {
  fingerprint: string;
  status: number | null;
  responseJson: string | null;
  etag: string | null;
  createdAt: Date;
}

/** Claims the key with a pending row; a taken key is a duplicate key (src/data/errors.ts). */
export async function insertClaim(db: Sql, userId: string, key: string, fingerprint: string, createdAt: Date): Promise<void> {
  await db.execute('INSERT INTO idempotency_keys (userId, idemKey, fingerprint, createdAt) VALUES (?, ?, ?, ?)', userId, key, fingerprint, createdAt);
}

export async function claimOf(db: Sql, userId: string, key: string): Promise<IdempotencyClaim | undefined> {
  const rows = await db.query<IdempotencyClaim>(
    'SELECT fingerprint, status, responseJson, etag, createdAt FROM idempotency_keys WHERE userId = ? AND idemKey = ?',
    userId,
    key,
  );
  return rows[0];
}

/** Keeps the response of the claim made at `createdAt`. */
export async function completeClaim(
  db: Sql,
  userId: string,
  key: string,
  createdAt: Date,
  response: { status: number; json: string; etag: string | null },
): Promise<void> {
  await db.execute(
    'UPDATE idempotency_keys SET status = ?, responseJson = ?, etag = ?, completedAt = ? WHERE userId = ? AND idemKey = ? AND createdAt = ?',
    response.status,
    response.json,
    response.etag,
    new Date(),
    userId,
    key,
    createdAt,
  );
}

/** Drops the claim made at `createdAt` while it is still pending (no response kept). */
export async function releaseClaim(db: Sql, userId: string, key: string, createdAt: Date): Promise<void> {
  await db.execute('DELETE FROM idempotency_keys WHERE userId = ? AND idemKey = ? AND createdAt = ? AND status IS NULL', userId, key, createdAt);
}

/** Drops the claim made at `createdAt`, pending or not (expired or abandoned). */
export async function deleteClaim(db: Sql, userId: string, key: string, createdAt: Date): Promise<void> {
  await db.execute('DELETE FROM idempotency_keys WHERE userId = ? AND idemKey = ? AND createdAt = ?', userId, key, createdAt);
}

/** Drops up to 10,000 claims made before `before`. */
export async function deleteClaimsBefore(db: Sql, before: Date): Promise<void> {
  await db.execute('DELETE FROM idempotency_keys WHERE createdAt < ? LIMIT 10000', before);
}
