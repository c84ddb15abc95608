/**
 * The outbox store: index work recorded in the same transaction as the write it describes
 * (transactional outbox), its dead letters, and the counts /metrics reports. Writing work wakes
 * the search worker once the transaction commits (Tx.afterCommit → signals.outboxWritten).
 */
import type * as mariadb from 'mariadb';
import { MAX_ATTEMPTS, WHOLE_MAX, type OutboxOp } from '../domain/index-work';
import { marks, sqlOn, type Sql } from './sql';
import { inTransaction, type Tx, type TxHandles } from './transaction';

export async function enqueueIndexWork(tx: Tx, op: OutboxOp, userId: string, projectId: string, sessionId: string | null): Promise<void> {
  await tx.execute('INSERT INTO search_outbox (op, userId, projectId, sessionId) VALUES (?, ?, ?, ?)', op, userId, projectId, sessionId);
  tx.afterCommit(tx.signals.outboxWritten.emit);
}

/** Every session of a project pushed again, whole, under its (new) owner: a project's move. */
export async function enqueueProjectReindex(tx: Tx, projectId: string): Promise<void> {
  await tx.execute("INSERT INTO search_outbox (op, userId, projectId, sessionId) SELECT 'reindex', userId, projectId, id FROM sessions WHERE projectId = ?", projectId);
  tx.afterCommit(tx.signals.outboxWritten.emit);
}

/**
 * Moves the given rows that reached MAX_ATTEMPTS to the dead-letter table (in the caller's
 * transaction); returns how many moved.
 */
export async function buryDeadRows(c: Sql, ids: number[]): Promise<number> {
  if (ids.length === 0) return 0;
  const moved = await c.execute(
    `INSERT INTO search_outbox_dead (id, op, userId, projectId, sessionId, attempts, createdAt, deadAt, lastError)
     SELECT id, op, userId, projectId, sessionId, attempts, createdAt, NOW(3), lastError FROM search_outbox
      WHERE id IN (${marks(ids)}) AND attempts >= ?`,
    ...ids,
    MAX_ATTEMPTS,
  );
  if (moved === 0) return 0;
  await c.execute(`DELETE FROM search_outbox WHERE id IN (${marks(ids)}) AND attempts >= ?`, ...ids, MAX_ATTEMPTS);
  return moved;
}

/** Rows in the dead-letter table. */
export async function deadCount(c: Sql): Promise<number> {
  const [row] = await c.query<{ n: unknown }>('SELECT COUNT(*) AS n FROM search_outbox_dead');
  return Number(row?.n ?? 0);
}

/** Rows waiting in the outbox for the primaries (rows they applied may stay for the standbys). */
export async function backlogCount(c: Sql): Promise<number> {
  const [row] = await c.query<{ n: unknown }>('SELECT COUNT(*) AS n FROM search_outbox WHERE doneAt IS NULL');
  return Number(row?.n ?? 0);
}

/** Work backing off after failures becomes due now (the engine is back). */
export async function makeAllDue(c: Sql): Promise<void> {
  await c.execute('UPDATE search_outbox SET availableAt = NOW(3) WHERE doneAt IS NULL AND availableAt > NOW(3)');
}

/**
 * Puts dead rows back into the outbox with a fresh count of attempts (`search outbox retry`):
 * one id, or all of them. Returns how many. Work is applied from the database's current state,
 * so a row retried late does no harm.
 */
export function retryDeadRows(db: TxHandles, id?: number): Promise<number> {
  const where = id === undefined ? '' : ' WHERE id = ?';
  const args = id === undefined ? [] : [id];
  return inTransaction(db, async (tx) => {
    const n = await tx.execute(
      `INSERT INTO search_outbox (op, userId, projectId, sessionId) SELECT op, userId, projectId, sessionId FROM search_outbox_dead${where} ORDER BY id`,
      ...args,
    );
    await tx.execute(`DELETE FROM search_outbox_dead${where}`, ...args);
    if (n > 0) tx.afterCommit(tx.signals.outboxWritten.emit);
    return n;
  });
}

// ---------------------------------------------------------------------------------------------
// The worker's side: claims, outcomes, queues (src/search/sync/: claims.ts, rebuild.ts, compaction.ts)

/** A row of index work as the worker claims it. */
export interface OutboxRow {
  id: number;
  op: OutboxOp;
  userId: string;
  projectId: string;
  sessionId: string | null;
  attempts: number;
}

/** Which rows a worker loop takes: 'fresh' the 'upsert' rows (for the recent index), 'main' every other op, 'all' both. */
type OutboxLane = 'fresh' | 'main' | 'all';

const ofLane = (lane: OutboxLane) => (lane === 'fresh' ? " AND op = 'upsert'" : lane === 'main' ? " AND op <> 'upsert'" : '');

/** Back-off after a failure: 200 ms doubling per attempt, capped at 30 s. */
const BACKOFF_SQL = 'DATE_ADD(NOW(3), INTERVAL LEAST(30000, 200 * POW(2, LEAST(attempts, 20))) * 1000 MICROSECOND)';

/** The op of some due row of the lane, if any: idle polling costs one indexed read (index on doneAt, availableAt). */
export async function dueOp(db: Sql, lane: OutboxLane): Promise<OutboxOp | undefined> {
  const rows = await db.query<{ id: number; op: OutboxOp }>(`SELECT id, op FROM search_outbox WHERE doneAt IS NULL AND availableAt <= NOW(3)${ofLane(lane)} LIMIT 1`);
  return rows[0]?.op;
}

/**
 * Runs `fn` in the worker's claim transaction on one connection: READ COMMITTED (no gap locks
 * while writers keep inserting; every statement sees the latest commits), committed when `fn`
 * returns, rolled back when it throws. Never retried: `fn` talks to the engine.
 */
export async function inClaimTransaction<T>(pool: Pick<mariadb.Pool, 'getConnection'>, fn: (tx: Sql) => Promise<T>): Promise<T> {
  const c = await pool.getConnection();
  try {
    await c.query('SET TRANSACTION ISOLATION LEVEL READ COMMITTED');
    await c.beginTransaction();
    try {
      const result = await fn(sqlOn(c));
      await c.commit();
      return result;
    } catch (err) {
      await c.rollback().catch(() => undefined);
      throw err;
    }
  } finally {
    await c.release();
  }
}

/**
 * Claims up to `limit` due rows of the lane, in id order, skipping rows other workers hold, with
 * the database's time of the claim. Walks the primary key: the availableAt index would make the
 * engine read (and lock) every due row before sorting, instead of stopping at the limit. While
 * applied rows are kept for the standbys the walk starts at the lowest row still to apply
 * (lowestPendingId), not over the rows kept.
 */
export function claimDue(tx: Sql, lane: OutboxLane, limit: number, fromId = 0): Promise<Array<OutboxRow & { now: Date }>> {
  return tx.query<OutboxRow & { now: Date }>(
    `SELECT id, op, userId, projectId, sessionId, attempts, NOW(3) AS now FROM search_outbox FORCE INDEX (PRIMARY)
      WHERE id >= ? AND doneAt IS NULL AND availableAt <= NOW(3)${ofLane(lane)} ORDER BY id LIMIT ? FOR UPDATE SKIP LOCKED`,
    fromId,
    limit,
  );
}

/** The lowest id the primaries still have to apply (0 when none): one read of the (doneAt, id) index. */
export async function lowestPendingId(db: Sql): Promise<number> {
  const [row] = await db.query<{ id: unknown }>('SELECT MIN(id) AS id FROM search_outbox WHERE doneAt IS NULL');
  return Number(row?.id ?? 0);
}

/** Rows of these projects older than `beforeId` (held by other workers, or waiting for a retry). */
export function earlierWork(
  tx: Sql,
  beforeId: number,
  projectIds: readonly string[],
): Promise<Array<Pick<OutboxRow, 'id' | 'op' | 'projectId' | 'sessionId'> & { waiting: number }>> {
  return tx.query(
    `SELECT id, op, projectId, sessionId, availableAt > NOW(3) AS waiting FROM search_outbox WHERE id < ? AND doneAt IS NULL AND projectId IN (${marks(projectIds)})`,
    beforeId,
    ...projectIds,
  );
}

/** Applied: the rows go. */
export async function deleteWork(tx: Sql, ids: readonly number[]): Promise<void> {
  if (ids.length) await tx.execute(`DELETE FROM search_outbox WHERE id IN (${marks(ids)})`, ...ids);
}

/** Applied on the primaries, kept for the standbys (pruneOutbox deletes them once every cursor has passed them). */
export async function markDone(tx: Sql, ids: readonly number[]): Promise<void> {
  if (ids.length) await tx.execute(`UPDATE search_outbox SET doneAt = NOW(3) WHERE id IN (${marks(ids)})`, ...ids);
}

/** Failed: one attempt more, the error kept, due again after the back-off. */
export async function retryLater(tx: Sql, ids: readonly number[], error: string): Promise<void> {
  if (ids.length === 0) return;
  await tx.execute(
    `UPDATE search_outbox SET attempts = attempts + 1, lastError = ?, availableAt = ${BACKOFF_SQL}
      WHERE id IN (${marks(ids)})`,
    error.slice(0, 2000),
    ...ids,
  );
}

/** Queues every session with `op` ('reindex': a rebuild; 'compact': filling an empty main index); returns how many. */
export function queueAllSessions(db: Sql, op: 'reindex' | 'compact'): Promise<number> {
  return db.execute(
    op === 'reindex'
      ? "INSERT INTO search_outbox (op, userId, projectId, sessionId) SELECT 'reindex', userId, projectId, id FROM sessions"
      : "INSERT INTO search_outbox (op, userId, projectId, sessionId) SELECT 'compact', userId, projectId, id FROM sessions",
  );
}

/** The current owning scope of each of these sessions (those that exist): where their index work goes. */
export function ownersOfSessions(db: Sql, keys: ReadonlyArray<{ projectId: string; sessionId: string }>): Promise<Array<{ projectId: string; id: string; userId: string }>> {
  if (keys.length === 0) return Promise.resolve([]);
  return db.query(
    `SELECT projectId, id, userId FROM sessions WHERE ${keys.map(() => '(projectId = ? AND id = ?)').join(' OR ')}`,
    ...keys.flatMap((k) => [k.projectId, k.sessionId]),
  );
}

/** The owning scopes (user and team ids) that hold sessions. */
export async function sessionOwnerScopes(db: Sql): Promise<string[]> {
  return (await db.query<{ userId: string }>('SELECT DISTINCT userId FROM sessions')).map((r) => r.userId);
}

/** Queues every session of these owning scopes for the main index ('compact' rows: only changed documents are sent); returns how many. */
export async function queueSessionsOfOwners(db: Sql, owners: readonly string[]): Promise<number> {
  let n = 0;
  for (let i = 0; i < owners.length; i += 500) {
    const some = owners.slice(i, i + 500);
    n += await db.execute(`INSERT INTO search_outbox (op, userId, projectId, sessionId) SELECT 'compact', userId, projectId, id FROM sessions WHERE userId IN (${marks(some)})`, ...some);
  }
  return n;
}

/** Queues the sessions written in the last day with the op their upload gave them (upsertOp, in SQL); returns how many. */
export function queueRecentlyWritten(db: Sql): Promise<number> {
  return db.execute(
    `INSERT INTO search_outbox (op, userId, projectId, sessionId)
     SELECT IF(markdownSize > ?, 'upsert_large', 'upsert'), userId, projectId, id FROM sessions
      WHERE updatedAt >= NOW(3) - INTERVAL 1 DAY`,
    WHOLE_MAX,
  );
}

/** Queues these sessions for the main index ('compact' rows). */
export async function queueCompaction(db: Sql, refs: ReadonlyArray<{ userId: string; projectId: string; sessionId: string }>): Promise<void> {
  if (refs.length === 0) return;
  await db.execute(
    `INSERT INTO search_outbox (op, userId, projectId, sessionId) VALUES ${refs.map(() => "('compact', ?, ?, ?)").join(', ')}`,
    ...refs.flatMap((r) => [r.userId, r.projectId, r.sessionId]),
  );
}

/** The sessions (project, session) with compaction work queued and not yet applied. */
export async function queuedCompactions(db: Sql): Promise<Array<{ projectId: string; sessionId: string }>> {
  return db.query<{ projectId: string; sessionId: string }>("SELECT projectId, sessionId FROM search_outbox WHERE doneAt IS NULL AND op = 'compact'");
}

/** True when some compaction work is queued. */
export async function compactionQueued(db: Sql): Promise<boolean> {
  return (await db.query("SELECT 1 FROM search_outbox WHERE op = 'compact' AND doneAt IS NULL LIMIT 1")).length > 0;
}

/** The highest id in the outbox (null when empty). */
export async function lastWorkId(db: Sql): Promise<number | null> {
  const [{ maxId }] = await db.query<{ maxId: number | null }>('SELECT MAX(id) AS maxId FROM search_outbox');
  return maxId ?? null;
}

/** Rows with an id up to `maxId` the primaries still have to apply. */
export async function workUpTo(db: Sql, maxId: number): Promise<number> {
  const [{ n }] = await db.query<{ n: unknown }>('SELECT COUNT(*) AS n FROM search_outbox WHERE id <= ? AND doneAt IS NULL', maxId);
  return Number(n);
}
