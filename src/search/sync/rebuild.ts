/**
 * Rebuilding and refilling the indexes from the database, always through the outbox so that the
 * ordering rules of src/search/worker.ts hold against live writes.
 */
import { lastWorkId, queueAllSessions, queueRecentlyWritten, workUpTo } from '../../data/outbox';
import { databaseNow, type Sql } from '../../data/sql';
import type { RunResult } from './claims';
import { allAnswer, type MeiliConnection } from '../engine/connection';
import type { EngineTarget } from './engine-router';

interface RebuildDeps {
  /** Statements on the write pool (src/data). */
  db: Sql;
  /** Every engine (engine-router.ts): their primaries (the standbys follow the outbox from their cursors). */
  targets: EngineTarget[];
  /** The primaries' connections. */
  conns: MeiliConnection[];
  indexUid: string;
  recentUid: string;
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
  const t0 = await databaseNow(o.db);
  const inserted = await queueAllSessions(o.db, 'reindex');
  const maxId = await lastWorkId(o.db);
  const remaining = () => workUpTo(o.db, maxId ?? 0);
  const total = await remaining();
  onProgress?.({ done: 0, total });
  let downSince: number | null = null;
  for (let left = total; left > 0;) {
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
  // What the rebuild did not write: sessions gone, and on an engine the scopes it no longer holds
  // (an engine was added: this is how the scopes that moved leave their former engine). Not on the
  // standbys: they may not have applied the rebuild's rows yet, and a standby whose engine's share
  // changed has a new identity, hence a rebuild of its own (sync/standby.ts).
  const stale = { filter: `syncedAt < ${t0.getTime()}` };
  for (const t of o.targets) {
    const writers = [{ w: t.primary, p: t.engine.primary }];
    for (const { w, p } of writers) {
      await w.waitTasks(p.main, [(await p.main.admin().index(o.indexUid).deleteDocuments(stale)).taskUid], 10 * 60_000);
      await w.waitTasks(p.recent, [(await p.recent.admin().index(o.recentUid).deleteDocuments(stale)).taskUid], 10 * 60_000);
    }
  }
  return { sessions: inserted };
}

/** Queues every session for the main index without waiting (a main index found empty at start). */
export async function queueAll(o: Pick<RebuildDeps, 'db' | 'notify'>): Promise<number> {
  const n = await queueAllSessions(o.db, 'compact');
  o.notify();
  return n;
}

/**
 * Queues the sessions written lately for the recent index (a recent index found empty at start
 * while the main one was not: after an upgrade, or if it was deleted). Its sessions are at most a
 * few compaction periods old; a day covers an engine that was away for long.
 */
export async function queueRecent(o: Pick<RebuildDeps, 'db' | 'notify'>): Promise<number> {
  const n = await queueRecentlyWritten(o.db);
  o.notify();
  return n;
}
