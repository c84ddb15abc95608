/**
 * Claiming index work (the rules are in src/search/worker.ts): one batch of due outbox rows of a
 * lane, locked with SKIP LOCKED in a READ COMMITTED transaction held while the work is applied;
 * rows set aside while older work on the same session or project is held elsewhere; rows done
 * deleted (marked done instead while standbys apply the outbox from their cursors), rows failed rescheduled with back-off and, after too many attempts, moved to the
 * dead-letter table.
 */
import type { Pool } from 'mariadb';
import {
  buryDeadRows,
  claimDue,
  deleteWork,
  dueOp,
  earlierWork,
  inClaimTransaction,
  lowestPendingId,
  markDone,
  retryLater,
  type OutboxRow,
} from '../../data/outbox';
import type { Sql } from '../../data/sql';
import type { Logger } from '../../logger';

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
 * Bulk rows (compaction, rebuild) claimed at once: their documents go to the main index without a
 * wait between pushes (index-writer.ts), so the engine applies them in one or two batches and pays
 * its per-batch cost (a commit, a pass over its prefix data), growing with the index, that often.
 * At 100k sessions on the bench corpus, bulk indexing ran at 129 sessions/s with 1,000 rows per
 * claim, 198 with 5,000, 231 with 10,000 (docs/benchmarks.md). 10,000 small sessions are ~40 MB of
 * markdown, read and pushed 8 MiB at a time; such a claim holds the main lane for about a minute
 * at that size.
 */
const BULK_BATCH = 10000;

/** Rows of `rows` that must wait because an older, unclaimed row touches the same session/project. */
export function deferredRows(
  rows: OutboxRow[],
  older: Array<Pick<OutboxRow, 'id' | 'op' | 'projectId' | 'sessionId'> & { waiting?: boolean | number }>,
): Set<number> {
  const claimed = new Set(rows.map((r) => r.id));
  // A row waiting for a retry is held by no worker: work that re-reads the database may pass it
  // (a failing unit never holds back later work), except a project's deletion,
  // which is applied as such, not from the database's state.
  const blockers = older.filter((o) => !claimed.has(o.id) && (!o.waiting || o.op === 'delete_project'));
  const deferred = new Set<number>();
  for (const r of rows) {
    const blocked = blockers.some(
      (b) => b.id < r.id && b.projectId === r.projectId && (r.op === 'delete_project' || b.op === 'delete_project' || b.sessionId === r.sessionId),
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
interface ClaimRun {
  pool: Pool;
  db: Sql;
  limit: number;
  lane: Lane | 'all';
  log: Logger;
  applyRows: (tx: Sql, rows: OutboxRow[], syncedAt: number) => Promise<ApplyOutcome>;
  /** Rows applied stay, marked done, for the standbys' cursors (sync/standby.ts). */
  retain: boolean;
}

export async function claimAndApply({ pool, db, limit, lane, log, applyRows, retain }: ClaimRun): Promise<RunResult> {
  const result: RunResult = { claimed: 0, applied: 0, failed: 0, deferred: 0 };
  // Cheap look first: idle polling costs one indexed read.
  const due = await dueOp(db, lane);
  if (due === undefined) return result;
  if (due === 'compact' || due === 'reindex') limit = Math.max(limit, BULK_BATCH);
  const fromId = retain ? await lowestPendingId(db) : 0;

  return inClaimTransaction(pool, async (tx) => {
    const rows = await claimDue(tx, lane, limit, fromId);
    result.claimed = rows.length;
    if (rows.length === 0) return result;
    const maxId = Math.max(...rows.map((r) => r.id));
    const older = await earlierWork(tx, maxId, [...new Set(rows.map((r) => r.projectId))]);
    const deferred = deferredRows(rows, older);
    result.deferred = deferred.size;
    const runnable = rows.filter((r) => !deferred.has(r.id));
    if (runnable.length > 0) {
      const syncedAt = rows[0].now.getTime();
      const outcome = await applyRows(tx, runnable, syncedAt);
      result.applied = outcome.done.length;
      result.failed = outcome.failed.length;
      await (retain ? markDone : deleteWork)(tx, outcome.done);
      if (outcome.failed.length) {
        await retryLater(tx, outcome.failed, outcome.error);
        // A unit that keeps failing is set aside rather than retried forever (not while the
        // engine is away: that is no fault of the work).
        const dead = outcome.away ? 0 : await buryDeadRows(tx, outcome.failed);
        if (dead > 0) log.error({ msg: 'search outbox work failed too often; moved to search_outbox_dead', rows: dead, err: outcome.error.slice(0, 500) });
      }
    }
    return result;
  });
}
