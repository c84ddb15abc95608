/**
 * Each standby's place in the search outbox (search_engine_cursors): the last outbox id it
 * applied, keyed by the engine's identity. The rows it has not applied yet, the lag /metrics
 * reports, and pruning the rows that every place has passed (docs/search.md, "Standbys").
 */
import type { OutboxRow } from './outbox';
import type { Sql } from './sql';

/** A cursor as its applier locks it: `lastId` null means older than what the outbox retains (rebuild). */
type LockedCursor = { lastId: number | null } | 'busy' | 'missing';

/**
 * Locks the cursor of `engine` for this transaction, skipping it when another instance holds it
 * (that instance feeds the standby now). A cursor that does not exist is created (lastId null:
 * the standby is rebuilt) and reported missing; the next attempt locks it.
 */
export async function lockCursor(tx: Sql, engine: string, position: number): Promise<LockedCursor> {
  const [row] = await tx.query<{ lastId: unknown }>('SELECT lastId FROM search_engine_cursors WHERE engine = ? FOR UPDATE SKIP LOCKED', engine);
  if (row) return { lastId: row.lastId == null ? null : Number(row.lastId) };
  const exists = await tx.query('SELECT 1 FROM search_engine_cursors WHERE engine = ?', engine);
  if (exists.length > 0) return 'busy';
  await tx.execute('INSERT IGNORE INTO search_engine_cursors (engine, position, lastId) VALUES (?, ?, NULL)', engine, position);
  return 'missing';
}

/** Moves a cursor (in the transaction that locked it). */
export async function setCursor(tx: Sql, engine: string, lastId: number | null): Promise<void> {
  await tx.execute('UPDATE search_engine_cursors SET lastId = ?, updatedAt = NOW(3) WHERE engine = ?', lastId, engine);
}

/** The cursor as last committed, without waiting for its lock: undefined when there is none. */
export async function readCursor(db: Sql, engine: string): Promise<number | null | undefined> {
  const [row] = await db.query<{ lastId: unknown }>('SELECT lastId FROM search_engine_cursors WHERE engine = ?', engine);
  if (!row) return undefined;
  return row.lastId == null ? null : Number(row.lastId);
}

/** The standby lost its indexes (or they were created empty): its cursor no longer says what it holds. */
export async function forgetCursor(db: Sql, engine: string): Promise<void> {
  await db.execute('UPDATE search_engine_cursors SET lastId = NULL, updatedAt = NOW(3) WHERE engine = ?', engine);
}

/** Every cursor goes (a configuration without standbys: rows are not kept, so no cursor stays valid). */
export async function dropCursors(db: Sql): Promise<void> {
  await db.execute('DELETE FROM search_engine_cursors');
}

/** The outbox rows after `lastId`, in id order, with their creation time and the database's time. */
export function rowsAfter(db: Sql, lastId: number, limit: number): Promise<Array<OutboxRow & { createdAt: Date; now: Date }>> {
  return db.query(
    'SELECT id, op, userId, projectId, sessionId, attempts, createdAt, NOW(3) AS now FROM search_outbox WHERE id > ? ORDER BY id LIMIT ?',
    lastId,
    limit,
  );
}

/** The newest outbox row written more than `ageMs` ago (0 when none): where a rebuilt standby's cursor starts. */
export async function settledRowId(db: Sql, ageMs: number): Promise<number> {
  const [row] = await db.query<{ id: unknown }>('SELECT MAX(id) AS id FROM search_outbox WHERE createdAt < NOW(3) - INTERVAL ? MICROSECOND', ageMs * 1000);
  return Number(row?.id ?? 0);
}

/**
 * How far a cursor is behind: whether rows after it exist, and the seconds between the newest
 * outbox row and the oldest row it has not applied (0 when there is none). A cursor older than
 * what is retained (null) counts from the oldest row kept.
 */
export async function cursorLag(db: Sql, lastId: number | null): Promise<{ behind: boolean; seconds: number }> {
  const [row] = await db.query<{ oldest: Date | null; newest: Date | null }>(
    `SELECT (SELECT createdAt FROM search_outbox WHERE id > ? ORDER BY id LIMIT 1) AS oldest,
            (SELECT createdAt FROM search_outbox ORDER BY id DESC LIMIT 1) AS newest`,
    lastId ?? 0,
  );
  if (!row?.oldest || !row.newest) return { behind: false, seconds: 0 };
  return { behind: true, seconds: Math.max(0, (row.newest.getTime() - row.oldest.getTime()) / 1000) };
}

/**
 * Deletes the outbox rows no engine needs any more: applied on the primaries and passed by every
 * cursor, and, whatever the cursors, applied more than `retentionMs` ago (the cursors that had not
 * passed those are set to null first: their standbys are rebuilt from the database). At most
 * `limit` rows of each kind per call; returns how many went and how many cursors expired. Run in
 * a READ COMMITTED transaction (inClaimTransaction).
 */
export async function pruneOutbox(db: Sql, retentionMs: number, limit = 5000): Promise<{ deleted: number; expired: number }> {
  const [cut] = await db.query<{ id: unknown }>(
    'SELECT MAX(id) AS id FROM (SELECT id FROM search_outbox WHERE doneAt < NOW(3) - INTERVAL ? MICROSECOND ORDER BY doneAt LIMIT ?) t',
    retentionMs * 1000,
    limit,
  );
  let expired = 0;
  let deleted = 0;
  if (cut?.id != null) {
    const upTo = Number(cut.id);
    expired = await db.execute('UPDATE search_engine_cursors SET lastId = NULL, updatedAt = NOW(3) WHERE lastId < ?', upTo);
    deleted += await db.execute('DELETE FROM search_outbox WHERE doneAt < NOW(3) - INTERVAL ? MICROSECOND AND id <= ? LIMIT ?', retentionMs * 1000, upTo, limit);
  }
  const [min] = await db.query<{ id: unknown }>('SELECT MIN(lastId) AS id FROM search_engine_cursors WHERE lastId IS NOT NULL');
  const passed = min?.id == null ? Number.MAX_SAFE_INTEGER : Number(min.id);
  deleted += await db.execute('DELETE FROM search_outbox WHERE doneAt IS NOT NULL AND id <= ? ORDER BY id LIMIT ?', passed, limit);
  return { deleted, expired };
}
