/**
 * Rebuilding and refilling the indexes from the database, always through the outbox so that the
 * ordering rules of src/search/worker.ts hold against live writes.
 */
import type { Pool } from 'mariadb';
import type { RunResult } from './claims';
import { allAnswer, type MeiliConnection } from './connection';
import { WHOLE_MAX } from './documents';
import type { IndexWriter } from './index-writer';

export interface RebuildDeps {
  pool: Pool;
  conn: MeiliConnection;
  recentConn: MeiliConnection;
  conns: MeiliConnection[];
  indexUid: string;
  recentUid: string;
  writer: IndexWriter;
  runOnce: (limit: number) => Promise<RunResult>;
  notify: () => void;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Rebuilds the index from the database: every session is queued for a fresh push (through the
 * outbox, so the ordering rules of src/search/worker.ts hold against live writes), the queue is drained here, and
 * what the rebuild did not refresh (documents of sessions that no longer exist) is removed.
 */
export async function reindexAll(o: RebuildDeps, onProgress?: (p: { done: number; total: number }) => void): Promise<{ sessions: number }> {
  const [{ now: t0 }] = await o.pool.query('SELECT NOW(3) AS now');
  const inserted = await o.pool.query(
    "INSERT INTO search_outbox (op, userId, projectId, sessionId) SELECT 'reindex', userId, projectId, id FROM sessions",
  );
  const [{ maxId }] = await o.pool.query('SELECT MAX(id) AS maxId FROM search_outbox');
  const remaining = async () =>
    Number((await o.pool.query('SELECT COUNT(*) AS n FROM search_outbox WHERE id <= ?', [maxId ?? 0]))[0].n);
  const total = await remaining();
  onProgress?.({ done: 0, total });
  let downSince: number | null = null;
  for (let left = total; left > 0; ) {
    let r: RunResult = { claimed: 0, applied: 0, failed: 0, deferred: 0 };
    if (o.conns.every((c) => c.isHealthy()) || (await allAnswer(o.conns))) {
      downSince = null;
      r = await o.runOnce(500);
    } else {
      downSince ??= Date.now();
      if (Date.now() - downSince > 60_000) throw new Error('search engine unavailable for 60 s; reindex stopped (queued work stays in the outbox)');
    }
    left = await remaining();
    onProgress?.({ done: total - left, total });
    if (left > 0 && r.applied === 0) await sleep(200);
  }
  const stale = { filter: `syncedAt < ${t0.getTime()}` };
  await o.writer.waitTasks(o.conn, [(await o.conn.admin().index(o.indexUid).deleteDocuments(stale)).taskUid], 10 * 60_000);
  await o.writer.waitTasks(o.recentConn, [(await o.recentConn.admin().index(o.recentUid).deleteDocuments(stale)).taskUid], 10 * 60_000);
  return { sessions: Number(inserted.affectedRows ?? 0) };
}

/** Queues every session for the main index without waiting (a main index found empty at start). */
export async function queueAll(o: Pick<RebuildDeps, 'pool' | 'notify'>): Promise<number> {
  const res = await o.pool.query(
    "INSERT INTO search_outbox (op, userId, projectId, sessionId) SELECT 'compact', userId, projectId, id FROM sessions",
  );
  o.notify();
  return Number(res.affectedRows ?? 0);
}

/**
 * Queues the sessions written lately for the recent index (a recent index found empty at start
 * while the main one was not: after an upgrade, or if it was deleted). Its sessions are at most a
 * few compaction periods old; a day covers an engine that was away for long.
 */
export async function queueRecent(o: Pick<RebuildDeps, 'pool' | 'notify'>): Promise<number> {
  // The op as upsertOp chooses it, in SQL.
  const res = await o.pool.query(
    `INSERT INTO search_outbox (op, userId, projectId, sessionId)
     SELECT IF(markdownSize > ?, 'upsert_large', 'upsert'), userId, projectId, id FROM sessions
      WHERE updatedAt >= NOW(3) - INTERVAL 1 DAY`,
    [WHOLE_MAX],
  );
  o.notify();
  return Number(res.affectedRows ?? 0);
}
