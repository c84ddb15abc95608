/**
 * The Idempotency-Key store (table `idempotency_keys`): a claim per user, scope and key, then the
 * response kept. The scope is the sha256 (hex) of "<METHOD> <path>" (src/http/idempotency.ts).
 */
import type { Sql } from './sql';

export interface IdempotencyClaim {
  fingerprint: string;
  status: number | null;
  responseJson: string | null;
  etag: string | null;
  createdAt: Date;
}

/** Which claim: the user, the scope of method and path, and the client's key. */
export interface ClaimId {
  userId: string;
  scope: string;
  key: string;
}

const WHERE = 'userId = ? AND scope = ? AND idemKey = ?';
const args = (id: ClaimId) => [id.userId, id.scope, id.key] as const;

/** Claims the key with a pending row; a taken key is a duplicate key (src/data/errors.ts). */
export async function insertClaim(db: Sql, id: ClaimId, fingerprint: string, createdAt: Date): Promise<void> {
  await db.execute('INSERT INTO idempotency_keys (userId, scope, idemKey, fingerprint, createdAt) VALUES (?, ?, ?, ?, ?)', ...args(id), fingerprint, createdAt);
}

export async function claimOf(db: Sql, id: ClaimId): Promise<IdempotencyClaim | undefined> {
  const rows = await db.query<IdempotencyClaim>(`SELECT fingerprint, status, responseJson, etag, createdAt FROM idempotency_keys WHERE ${WHERE}`, ...args(id));
  return rows[0];
}

/** Keeps the response of the claim made at `createdAt`. */
export async function completeClaim(db: Sql, id: ClaimId, createdAt: Date, response: { status: number; json: string; etag: string | null }): Promise<void> {
  await db.execute(
    `UPDATE idempotency_keys SET status = ?, responseJson = ?, etag = ?, completedAt = ? WHERE ${WHERE} AND createdAt = ?`,
    response.status,
    response.json,
    response.etag,
    new Date(),
    ...args(id),
    createdAt,
  );
}

/** Drops the claim made at `createdAt` while it is still pending (no response kept). */
export async function releaseClaim(db: Sql, id: ClaimId, createdAt: Date): Promise<void> {
  await db.execute(`DELETE FROM idempotency_keys WHERE ${WHERE} AND createdAt = ? AND status IS NULL`, ...args(id), createdAt);
}

/** Drops the claim made at `createdAt`, pending or not (expired or abandoned). */
export async function deleteClaim(db: Sql, id: ClaimId, createdAt: Date): Promise<void> {
  await db.execute(`DELETE FROM idempotency_keys WHERE ${WHERE} AND createdAt = ?`, ...args(id), createdAt);
}

/** Drops up to 10,000 claims made before `before`. */
export async function deleteClaimsBefore(db: Sql, before: Date): Promise<void> {
  await db.execute('DELETE FROM idempotency_keys WHERE createdAt < ? LIMIT 10000', before);
}
