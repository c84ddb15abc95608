/**
 * Compaction (docs/search.md): the sessions of the small recent index move into the main one in
 * bulk ('compact' outbox rows, claimed up to BULK_BATCH at once), which also retires their
 * recent copies; due every few minutes, or early when the recent index grows large or holds
 * many sessions that every search must leave out of the main index.
 */
import { compactionQueued, queueCompaction, queuedCompactions } from '../../data/outbox';
import { databaseNow, type Sql } from '../../data/sql';
import type { Index } from 'meilisearch';
import type { Logger } from '../../logger';
import type { MeiliConnection } from '../engine/connection';
import { sessionKeyOf, type SessionDocument } from '../../domain/search-documents';
import { hasEngineCode } from '../engine/http-client';
import { chunked } from './index-writer';

/** Documents (a large session has one per ~1.5 KB fragment) that start a compaction early. */
export const RECENT_MAX = 5000;
/** A session written this recently stays in the recent index at a compaction (a live session
 * would be moved again at once, and written back whole). */
const SETTLED_MS = 60_000;

interface CompactionOptions {
  /** Statements on the write pool (src/data). */
  db: Sql;
  recentConn: MeiliConnection;
  recentUid: string;
  log: Logger;
  /** Wakes the worker (compaction rows were queued). */
  notify: () => void;
  /** Compact at least this often… */
  everyMs: number;
  /** …or as soon as the recent index holds this many documents… */
  recentMax: number;
  /**
   * …or this many settled documents of sessions that have a copy in the main index (not
   * `noMainCopy`): every search reads and leaves out those sessions until they move (default
   * recentMax / 10). Settled only: a live session being written would not move, and would have a
   * compaction of nothing due every few seconds.
   */
  shadowingMax?: number;
  /** Sessions written this recently stay at a compaction that was due (default SETTLED_MS). */
  settledMs?: number;
}

export class Compaction {
  private lastCompaction = Date.now();

  constructor(private readonly o: CompactionOptions) {}

  /**
   * Queues the sessions of the recent index for the main one ('compact' rows: applied in order
   * with any other work on the same session, in batches of up to BULK_BATCH), all of them or
   * only those not written for `settledMs` (a live session would be moved again at once); a
   * session whose compaction is queued already is not queued again. Returns how many it queued.
   */
  async queueCompaction(settledMs = 0): Promise<number> {
    return this.queue(await this.settled(settledMs));
  }

  /** Queues the sessions of the recent index's documents that match `filter` (all when none). */
  private async queue(filter: string | undefined): Promise<number> {
    const recent = this.o.recentConn.admin().index<SessionDocument>(this.o.recentUid);
    // One row per session (a large one has fragment documents too).
    const bySession = new Map<string, Pick<SessionDocument, 'userId' | 'projectId' | 'sessionId'>>();
    for (let offset = 0; ; offset += 10_000) {
      const page = await recent.getDocuments<Pick<SessionDocument, 'userId' | 'projectId' | 'sessionId'>>({
        fields: ['userId', 'projectId', 'sessionId'],
        filter,
        limit: 10_000,
        offset,
      });
      for (const d of page.results) bySession.set(sessionKeyOf(d.projectId, d.sessionId), d);
      if (page.results.length < 10_000) break;
    }
    for (const q of await queuedCompactions(this.o.db)) bySession.delete(sessionKeyOf(q.projectId, q.sessionId));
    const refs = [...bySession.values()];
    this.lastCompaction = Date.now();
    for (const group of chunked(refs, 500)) {
      await queueCompaction(this.o.db, group);
    }
    if (refs.length) this.o.notify();
    return refs.length;
  }

  /** The recent documents not written in the last `settledMs` (by the database's clock, as `syncedAt`). */
  private async settled(settledMs: number): Promise<string | undefined> {
    return settledMs > 0 ? `syncedAt < ${(await databaseNow(this.o.db)).getTime() - settledMs}` : undefined;
  }

  /**
   * Compacts when the recent index is due: big enough, holding many settled sessions that searches
   * leave out of the main index, or not compacted for compactEveryMs.
   */
  async compactIfDue(): Promise<void> {
    if (await compactionQueued(this.o.db)) return;
    const recent = this.o.recentConn.admin().index(this.o.recentUid);
    const { numberOfDocuments } = await recent.getStats();
    if (numberOfDocuments === 0) {
      this.lastCompaction = Date.now();
      return;
    }
    const shadowingMax = this.o.shadowingMax ?? Math.ceil(this.o.recentMax / 10);
    const bySizeOrAge = numberOfDocuments >= this.o.recentMax || Date.now() - this.lastCompaction >= this.o.everyMs;
    // Fewer documents than the early trigger counts cannot reach it: neither clock nor count asked.
    if (!bySizeOrAge && numberOfDocuments < shadowingMax) return;
    // One reading of the database's clock serves the count and the compaction.
    const settled = await this.settled(this.o.settledMs ?? SETTLED_MS);
    const due = bySizeOrAge || (await shadowingDocuments(recent, settled)) >= shadowingMax;
    if (due) {
      const n = await this.queue(settled);
      if (n > 0) this.o.log.info({ msg: 'search: moving the recent index into the main one', sessions: n });
    }
  }
}

/**
 * Documents of the recent index (those settled: a live session being written stays) whose sessions
 * may have a copy in the main index (held-sessions.ts): 0 when `noMainCopy` is not filterable yet
 * (settings applied at start).
 */
async function shadowingDocuments(recent: Index, settled: string | undefined): Promise<number> {
  try {
    const filter = settled ? `NOT noMainCopy = true AND ${settled}` : 'NOT noMainCopy = true';
    return (await recent.getDocuments({ filter, fields: ['id'], limit: 1 })).total;
  } catch (err) {
    if (hasEngineCode(err, 'invalid_document_filter')) return 0;
    throw err;
  }
}
