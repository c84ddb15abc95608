/**
 * Search: the Meilisearch adapter behind the SearchPort, the outbox worker that keeps the index in
 * line with the database, and (MEILI_URL unset) the embedded engine it supervises.
 */
import type { Config } from '../config';
import { makeAllDue } from '../data/outbox';
import { sqlOn } from '../data/sql';
import type { DbHandles } from '../db/client';
import type { Offload } from '../offload';
import type { Logger } from '../logger';
import { searchIndex } from './engine/adapter';
import { allAnswer, MeiliConnection, probeAll } from './engine/connection';
import { EmbeddedMeili } from './embedded/embedded';
import { ensureIndex, indexUidOf, legacyIndexUidsOf, recentUidOf } from './engine/index-settings';
import type { SearchPage, SearchPort, SearchRequest } from './engine/port';
import { OutboxWorker } from './sync/worker';

export type { SearchHit, SearchPage, SearchPort, SearchOptions, SearchRequest } from './engine/port';

export interface ReindexProgress {
  done: number;
  total: number;
}

export interface Search extends SearchPort {
  /** Wake the outbox worker for work written outside the data layer's transactions (those wake it on commit). */
  notify(): void;
  /** Outbox rows not yet applied (for metrics). */
  backlog(): Promise<number>;
  /** Outbox rows set aside after failing 10 times (search_outbox_dead). */
  deadLetters(): Promise<number>;
  /** Rebuilds the index from the database; resolves when done. Needs start() first. */
  reindexAll(onProgress?: (p: ReindexProgress) => void): Promise<{ sessions: number }>;
  /**
   * Queues the recent index's sessions for the main one now, or only those not written for
   * `settledMs` (the worker also does it on its own). Returns how many.
   */
  compact(settledMs?: number): Promise<number>;
  /** The main index; the recent one is recentUidOf(indexUid). */
  readonly indexUid: string;
  /** The embedded engine, when this process uses one (MEILI_URL unset). */
  readonly embedded: EmbeddedMeili | null;
  /** The embedded engine of the recent index (MEILI_URL unset). */
  readonly recentEmbedded: EmbeddedMeili | null;
}

export interface SearchFactoryDeps {
  config: Config;
  /** The write pool (the worker claims and applies outbox work on it), and the data layer's signals: index work committed wakes the worker. */
  db: Pick<DbHandles, 'pool' | 'signals'>;
  logger: Logger;
  /** Builds documents of large sessions off the event loop (src/offload); default inline. */
  offload?: Offload;
  /** Tests and bench: worker poll interval, batch size, when to compact. */
  worker?: { pollMs?: number; batchSize?: number; compactEveryMs?: number; recentMax?: number };
}

export function createSearch({ config, db, logger, offload, worker: workerOpts }: SearchFactoryDeps): Search {
  const pool = db.pool;
  const log = logger.child({ component: 'search' });
  const indexUid = indexUidOf(config.namespace);
  const recentUid = recentUidOf(indexUid);
  const embedded = config.meiliUrl ? null : new EmbeddedMeili({ dataDir: config.dataDir, logger: log });
  const conn = new MeiliConnection(embedded ? { embedded } : { url: config.meiliUrl!, key: config.meiliMasterKey }, log);
  // The recent index on an engine of its own, when there is one: its small batches then never
  // wait behind the main index's (a compaction takes seconds to minutes on a large archive).
  const recentEmbedded = embedded ? new EmbeddedMeili({ dataDir: config.dataDir, name: 'meilisearch-recent', logger: log }) : null;
  const recentConn = recentEmbedded
    ? new MeiliConnection({ embedded: recentEmbedded }, log)
    : config.meiliRecentUrl
      ? new MeiliConnection({ url: config.meiliRecentUrl, key: config.meiliRecentMasterKey }, log)
      : conn;
  const conns = recentConn === conn ? [conn] : [conn, recentConn];
  const healthy = () => conns.every((c) => c.isHealthy());
  /** Both indexes present with our settings; true for each one created just now (empty). */
  const ensureIndexes = async () => ({
    created: await ensureIndex(conn.admin(), indexUid),
    recentCreated: await ensureIndex(recentConn.admin(), recentUid),
  });
  let indexReady = false;
  let preparing: Promise<void> | null = null;
  const worker = new OutboxWorker({ pool, conn, recentConn, indexUid, logger: log, ready: () => indexReady, offload, ...workerOpts });
  db.signals.outboxWritten.on(() => worker.notify());
  let started = false;
  let retryTimer: NodeJS.Timeout | null = null;

  /** Index present with our settings; an index created just now is rebuilt from the database. */
  const prepareIndex = (): Promise<void> => {
    if (preparing) return preparing;
    const p = (async () => {
      try {
        const { created, recentCreated } = await ensureIndexes();
        indexReady = true;
        if (created) {
          const n = await worker.queueAll();
          if (n > 0) log.info({ msg: 'search index created; rebuilding it from the database', sessions: n });
          // An index of an earlier document layout is not read any more.
          for (const uid of legacyIndexUidsOf(config.namespace)) {
            for (const c of conns)
              await c
                .admin()
                .deleteIndex(uid)
                .catch(() => undefined);
          }
        } else if (recentCreated) {
          const n = await worker.queueRecent();
          if (n > 0) log.info({ msg: 'recent search index created; filling it with the sessions written lately', sessions: n });
        }
        // A recent index on the main engine is not read when the recent one has an engine of its own.
        if (recentCreated && recentConn !== conn)
          await conn
            .admin()
            .deleteIndex(recentUid)
            .catch(() => undefined);
      } catch (err) {
        probeAll(conns);
        log.warn({ msg: 'search index not ready', err: String((err as Error)?.message ?? err) });
      }
    })().finally(() => {
      if (preparing === p) preparing = null;
    });
    preparing = p;
    return p;
  };

  const recreateIndex = () => {
    indexReady = false;
    void prepareIndex();
  };
  for (const c of conns) {
    // After an outage an engine may come back empty (data reset): check the indexes before writing.
    c.onDown(() => {
      indexReady = false;
    });
    c.onUp(() => {
      if (!started || !healthy()) return;
      void (async () => {
        await prepareIndex();
        // Work that failed while the engine was away need not wait out its back-off.
        await makeAllDue(sqlOn(pool)).catch(() => undefined);
        worker.notify();
      })();
    });
  }
  const engines = [
    { engine: embedded, conn },
    { engine: recentEmbedded, conn: recentConn },
  ].filter((e): e is { engine: EmbeddedMeili; conn: MeiliConnection } => e.engine !== null);

  return {
    indexUid,
    embedded,
    recentEmbedded,

    async start() {
      if (started) return;
      started = true;
      for (const { engine, conn: c } of engines) {
        try {
          await engine.start();
        } catch (err) {
          // A binary that fails its checksum is a reason not to start; anything else is an outage.
          if (/sha256|not found/.test(String((err as Error)?.message))) throw err;
          log.error({ msg: 'embedded meilisearch did not start; search unavailable until it does', home: engine.home, err: String(err) });
        }
        engine.onChange(() => void c.checkHealth());
      }
      if (await allAnswer(conns)) await prepareIndex();
      for (const c of conns) c.startMonitor(1000);
      // An index that could not be prepared (engine away, or reset under us) is retried.
      retryTimer = setInterval(() => {
        if (started && !indexReady && healthy()) void prepareIndex();
      }, 2000);
      retryTimer.unref();
      if (config.workersEnabled) worker.start();
    },

    async stop() {
      if (!started) return;
      started = false;
      if (retryTimer) clearInterval(retryTimer);
      retryTimer = null;
      await worker.stop();
      await preparing?.catch(() => undefined);
      for (const c of conns) c.close();
      for (const { engine } of engines) await engine.stop();
    },

    search(request: SearchRequest): Promise<SearchPage> {
      return searchIndex({ conns: { main: conn, recent: recentConn }, indexes: { main: indexUid, recent: recentUid }, onIndexMissing: recreateIndex }, request);
    },

    isHealthy: healthy,
    notify: () => worker.notify(),
    backlog: () => worker.backlog(),
    deadLetters: () => worker.deadLetters(),

    async reindexAll(onProgress) {
      if (!started) throw new Error('search not started');
      if (!(await allAnswer(conns))) throw new Error('search engine unavailable');
      await ensureIndexes();
      indexReady = true;
      return worker.reindexAll(onProgress);
    },

    compact: (settledMs?: number) => worker.queueCompaction(settledMs),
  };
}
