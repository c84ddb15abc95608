/**
 * Claiming index work (the rules are in src/search/worker.ts): one batch of due outbox rows of a
 * lane, locked with SKIP LOCKED in a READ COMMITTED transaction held while the work is applied;
 * rows set aside while older work on the same session or project is held elsewhere; rows done
 * deleted, rows failed rescheduled with back-off and, after too many attempts, moved to the
 * dead-letter table.
 */
import type { Pool, PoolConnection } from 'mariadb';
import type { Logger } from '../logger';
import { buryDeadRows, type OutboxOp } from './outbox';

export interface OutboxRow {
  id: number;
  op: OutboxOp;
  userId: string;
  projectId: string;
  sessionId: string | null;
  attempts: number;
}

export interface RunResult {
  claimed: number;
  applied: number;
  failed: number;
  /** Set aside: another worker holds older work for the same session or project. */
  deferred: number;
}

/** The worker's two loops: writes for the recent index, and everything for the main one. */
export type Lane = 'fresh' | 'main';

/**
 * Compaction rows claimed at once: one main-index batch pays the engine's per-batch cost, which
 * grows with the index, once for all of them.
 */
export const COMPACT_BATCH = 1000;
/** Back-off after a failure: 200 ms doubling per attempt, capped at 30 s. */
const BACKOFF_SQL = 'DATE_ADD(NOW(3), INTERVAL LEAST(30000, 200 * POW(2, LEAST(attempts, 20))) * 1000 MICROSECOND)';
const placeholders = (n: number) => Array(n).fill('?').join(', ');

/** Rows of `rows` that must wait because an older, unclaimed row touches the same session/project. */
export function deferredRows(
  rows: OutboxRow[],
  older: Array<Pick<OutboxRow, 'id' | 'op' | 'projectId' | 'sessionId'> & { waiting?: boolean | number }>,
): Set<number> {
  const claimed = new Set(rows.map((r) => r.id));
  // A row waiting for a retry is held by no worker: work that re-reads the database may pass it
  // (contract §16: a failing unit never holds back later work), except a project's deletion,
  // which is applied as such, not from the database's state.
  const blockers = older.filter((o) => !claimed.has(o.id) && (!o.waiting || o.op === 'delete_project'));
  const deferred = new Set<number>();
  for (const r of rows) {
    const blocked = blockers.some(
      (b) =>
        b.id < r.id &&
        b.projectId === r.projectId &&
        (r.op === 'delete_project' || b.op === 'delete_project' || b.sessionId === r.sessionId),
    );
    if (blocked) deferred.add(r.id);
  }
  return deferred;
}

/** What applying claimed rows came to: ids done and failed, the last error, and whether an engine was away. */
export interface ApplyOutcome {
  done: number[];
  failed: number[];
  error: string;
  away: boolean;
}

/**
 * Claims one batch and applies it: rows of one lane (the fresh lane takes 'upsert' rows, which go
 * to the recent index; the main lane every other kind), or of both.
 */
export async function claimAndApply(
  pool: Pool,
  limit: number,
  lane: Lane | 'all',
  log: Logger,
  applyRows: (c: PoolConnection, rows: OutboxRow[], syncedAt: number) => Promise<ApplyOutcome>,
): Promise<RunResult> {
  const result: RunResult = { claimed: 0, applied: 0, failed: 0, deferred: 0 };
  const ofLane = lane === 'fresh' ? " AND op = 'upsert'" : lane === 'main' ? " AND op <> 'upsert'" : '';
  // Cheap look first (index on availableAt): idle polling costs one indexed read.
  const probe = await pool.query(`SELECT id, op FROM search_outbox WHERE availableAt <= NOW(3)${ofLane} LIMIT 1`);
  if (probe.length === 0) return result;
  if (probe[0].op === 'compact') limit = Math.max(limit, COMPACT_BATCH);

  const c = await pool.getConnection();
  try {
    // READ COMMITTED: no gap locks (writers keep inserting), every statement sees the latest commits.
    await c.query('SET TRANSACTION ISOLATION LEVEL READ COMMITTED');
    await c.beginTransaction();
    try {
      // Walk the primary key in order: the availableAt index would make the engine read (and
      // lock) every due row before sorting, instead of stopping at the limit.
      const rows: Array<OutboxRow & { now: Date }> = await c.query(
        `SELECT id, op, userId, projectId, sessionId, attempts, NOW(3) AS now FROM search_outbox FORCE INDEX (PRIMARY)
          WHERE availableAt <= NOW(3)${ofLane} ORDER BY id LIMIT ? FOR UPDATE SKIP LOCKED`,
        [limit],
      );
      result.claimed = rows.length;
      if (rows.length === 0) {
        await c.commit();
        return result;
      }
      const maxId = Math.max(...rows.map((r) => r.id));
      const older = await c.query(
        `SELECT id, op, projectId, sessionId, availableAt > NOW(3) AS waiting FROM search_outbox WHERE id < ? AND projectId IN (${placeholders(
          new Set(rows.map((r) => r.projectId)).size,
        )})`,
        [maxId, ...new Set(rows.map((r) => r.projectId))],
      );
      const deferred = deferredRows(rows, older);
      result.deferred = deferred.size;
      const runnable = rows.filter((r) => !deferred.has(r.id));
      if (runnable.length > 0) {
        const syncedAt = rows[0].now.getTime();
        const outcome = await applyRows(c, runnable, syncedAt);
        result.applied = outcome.done.length;
        result.failed = outcome.failed.length;
        if (outcome.done.length) {
          await c.query(`DELETE FROM search_outbox WHERE id IN (${placeholders(outcome.done.length)})`, outcome.done);
        }
        if (outcome.failed.length) {
          await c.query(
            `UPDATE search_outbox SET attempts = attempts + 1, lastError = ?, availableAt = ${BACKOFF_SQL}
              WHERE id IN (${placeholders(outcome.failed.length)})`,
            [outcome.error.slice(0, 2000), ...outcome.failed],
          );
          // A unit that keeps failing is set aside rather than retried forever (not while the
          // engine is away: that is no fault of the work).
          const dead = outcome.away ? 0 : await buryDeadRows(c, outcome.failed);
          if (dead > 0) log.error({ msg: 'search outbox work failed too often; moved to search_outbox_dead', rows: dead, err: outcome.error.slice(0, 500) });
        }
      }
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
