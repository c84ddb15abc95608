/**
 * The outbox store: index work recorded in the same transaction as the write it describes
 * (transactional outbox), its dead letters, and the counts /metrics reports. Writing work wakes
 * the search worker once the transaction commits (Tx.afterCommit → signals.outboxWritten).
 */
import { MAX_ATTEMPTS, type OutboxOp } from '../domain/index-work';
import { marks, type Sql } from './sql';
import { inTransaction, type Tx, type TxHandles } from './transaction';

export async function enqueueIndexWork(tx: Tx, op: OutboxOp, userId: string, projectId: string, sessionId: string | null): Promise<void> {
  await tx.execute('INSERT INTO search_outbox (op, userId, projectId, sessionId) VALUES (?, ?, ?, ?)', op, userId, projectId, sessionId);
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

/** Rows waiting in the outbox. */
export async function backlogCount(c: Sql): Promise<number> {
  const [row] = await c.query<{ n: unknown }>('SELECT COUNT(*) AS n FROM search_outbox');
  return Number(row?.n ?? 0);
}

/** Work backing off after failures becomes due now (the engine is back). */
export async function makeAllDue(c: Sql): Promise<void> {
  await c.execute('UPDATE search_outbox SET availableAt = NOW(3) WHERE availableAt > NOW(3)');
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
