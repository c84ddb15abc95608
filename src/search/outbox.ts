/**
 * Index work recorded in the same transaction as the write it describes (transactional outbox).
 * The worker in this folder applies it; see README "Search".
 *
 * Ops: 'upsert' (session created or changed; 'upsert_large' when its markdown is too large to be
 * indexed whole, so that it goes to the worker's main lane), 'delete' (session deleted),
 * 'delete_project' (sessionId null); 'reindex' is written by a rebuild only (push the session
 * whole, unchanged fragments included); 'compact' moves a session into the main index (changed
 * fragments only: compaction of the recent index, and filling a new main index).
 */
import { WHOLE_MAX } from './documents';

export type OutboxOp = 'upsert' | 'upsert_large' | 'delete' | 'delete_project' | 'reindex' | 'compact';

/** The op of a session upsert, by the size of its markdown (see documents.ts, WHOLE_MAX). */
export const upsertOp = (markdownSize: number): OutboxOp => (markdownSize > WHOLE_MAX ? 'upsert_large' : 'upsert');

/** Anything that can run a raw statement: the Prisma client or an interactive transaction. */
export interface RawExecutor {
  $executeRawUnsafe(query: string, ...values: unknown[]): Promise<number>;
}

export async function enqueueIndexWork(
  tx: RawExecutor,
  op: OutboxOp,
  userId: string,
  projectId: string,
  sessionId: string | null,
): Promise<void> {
  await tx.$executeRawUnsafe(
    'INSERT INTO search_outbox (op, userId, projectId, sessionId) VALUES (?, ?, ?, ?)',
    op,
    userId,
    projectId,
    sessionId,
  );
}

/** A unit of work that failed this many times moves to search_outbox_dead (contract §16). */
export const MAX_ATTEMPTS = 10;

interface SqlRunner {
  query(sql: string, values?: unknown[]): Promise<any>;
}

/**
 * Moves the given rows that reached MAX_ATTEMPTS to the dead-letter table (in the caller's
 * transaction); returns how many moved.
 */
export async function buryDeadRows(c: SqlRunner, ids: number[]): Promise<number> {
  if (ids.length === 0) return 0;
  const marks = ids.map(() => '?').join(', ');
  const res = await c.query(
    `INSERT INTO search_outbox_dead (id, op, userId, projectId, sessionId, attempts, createdAt, deadAt, lastError)
     SELECT id, op, userId, projectId, sessionId, attempts, createdAt, NOW(3), lastError FROM search_outbox
      WHERE id IN (${marks}) AND attempts >= ?`,
    [...ids, MAX_ATTEMPTS],
  );
  if (Number(res.affectedRows ?? 0) === 0) return 0;
  await c.query(`DELETE FROM search_outbox WHERE id IN (${marks}) AND attempts >= ?`, [...ids, MAX_ATTEMPTS]);
  return Number(res.affectedRows);
}

/** Rows in the dead-letter table. */
export async function deadCount(c: SqlRunner): Promise<number> {
  const [row] = await c.query('SELECT COUNT(*) AS n FROM search_outbox_dead');
  return Number(row.n);
}

/**
 * Puts dead rows back into the outbox with a fresh count of attempts (`search outbox retry`):
 * one id, or all of them. Returns how many. Work is applied from the database's current state,
 * so a row retried late does no harm.
 */
export async function retryDeadRows(pool: { getConnection(): Promise<any> }, id?: number): Promise<number> {
  const c = await pool.getConnection();
  try {
    await c.beginTransaction();
    const where = id === undefined ? '' : ' WHERE id = ?';
    const args = id === undefined ? [] : [id];
    const res = await c.query(
      `INSERT INTO search_outbox (op, userId, projectId, sessionId) SELECT op, userId, projectId, sessionId FROM search_outbox_dead${where} ORDER BY id`,
      args,
    );
    await c.query(`DELETE FROM search_outbox_dead${where}`, args);
    await c.commit();
    return Number(res.affectedRows ?? 0);
  } catch (err) {
    await c.rollback().catch(() => undefined);
    throw err;
  } finally {
    await c.release();
  }
}
