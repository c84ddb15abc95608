/**
 * Search: the Meilisearch adapter behind the SearchPort, the outbox worker that keeps the index in
 * line with the database, and (MEILI_URL unset) the embedded engine it supervises. With several
 * engines (MEILI_URLS) or standbys (MEILI_STANDBY_URLS) each owning scope lives on one engine
 * (placement.ts), searches ask only the caller's engines (fanout.ts) and a standby takes over the
 * searches of a primary that fails.
 */
import type { Config } from '../config';
import { makeAllDue } from '../data/outbox';
import { sqlOn } from '../data/sql';
import type { DbHandles } from '../db/client';
import type { Offload } from '../offload';
import type { Logger } from '../logger';
import { searchIndex } from './engine/adapter';
import { allAnswer, probeAll } from './engine/connection';
import type { EmbeddedMeili } from './embedded/embedded';
import type { SearchEngine } from './engine/engines';
import { searchEngines } from './engine/fanout';
import { engineOf, scopesByEngine } from './engine/placement';
import { documentIdOf, EMBEDDER } from '../domain/search-documents';
import { rootCause, MeiliHttpError } from './engine/http-client';
import { Embedder, isLexicalQuery, vectorOf, type EmbeddingStats } from './semantic/embedder';
import { EmbeddingSweeper } from './semantic/embedding-sweeper';
import { recentTermCounts, sumCounts, termCounts } from './engine/term-counts';
import { ensureIndex, indexUidOf, legacyIndexUidsOf, otherVariantsOf, recentUidOf } from './engine/index-settings';
import type { EngineStatus, SearchPage, SearchPort, SearchRequest } from './engine/port';
import { setupEngines } from './setup';
import { OutboxWorker } from './sync/worker';

export type { EngineStatus, SearchHit, SearchPage, SearchPort, SearchOptions, SearchRequest } from './engine/port';

interface ReindexProgress {
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
  /** Each engine's health (metrics): primary and standby, and whether the standby is in sync. */
  engineStatus(): EngineStatus[];
  /** Every standby that answers has applied the whole outbox from its cursor (states and lags read afresh). */
  standbysCaughtUp(): Promise<boolean>;
  /** Semantic search's counts (/metrics); null when EMBEDDINGS_URL is unset. */
  embeddingStatus(): EmbeddingStats | null;
}

interface SearchFactoryDeps {
  config: Config;
  /** The write pool (the worker claims and applies outbox work on it), and the data layer's signals: index work committed wakes the worker. */
  db: Pick<DbHandles, 'pool' | 'signals'>;
  logger: Logger;
  /** Builds documents of large sessions off the event loop (src/offload); default inline. */
  offload?: Offload;
  /** Tests and bench: worker poll interval, batch size, when to compact. */
  worker?: { pollMs?: number; batchSize?: number; compactEveryMs?: number; recentMax?: number; standbyRetentionMs?: number; standbyGapGraceMs?: number };
}

export function createSearch({ config, db, logger, offload, worker: workerOpts }: SearchFactoryDeps): Search {
  const pool = db.pool;
  const log = logger.child({ component: 'search' });
  // Semantic search (EMBEDDINGS_URL): an index layout with an embedder, and the loop that gives its documents their vectors.
  const embedder = config.embeddings ? new Embedder(config.embeddings, log) : null;
  const indexUid = indexUidOf(config.namespace, config.embeddings?.dimensions ?? null);
  const recentUid = recentUidOf(indexUid);
  const { engines, embedded, recentEmbedded, conns, single } = setupEngines(config, log);
  const primaryConns = [...new Set(engines.flatMap((e) => e.primaryConns()))];
  const healthy = () => engines.every((e) => e.serving());
  let preparing: Promise<void> | null = null;
  const worker = new OutboxWorker({
    pool,
    conn: engines[0].primary.main,
    engines,
    indexUid,
    logger: log,
    ready: () => engines.some((e) => e.ready),
    offload,
    standbyRetentionMs: config.searchStandbyRetentionMinutes * 60_000,
    ...workerOpts,
  });
  db.signals.outboxWritten.on(() => worker.notify());
  const sweeper = embedder ? new EmbeddingSweeper({ engines, indexUid, embedder, log, pool, lockName: `${config.namespace}:embedding-sweep` }) : null;

  /**
   * A search made hybrid when an embedder is set, the query is not lexical-only (quoted phrases,
   * identifiers) and its vector came in time; else it is left lexical (docs/search.md, "Semantic search").
   */
  const withSemantic = (request: SearchRequest): SearchRequest => {
    if (!embedder) return request;
    const onRefused = (err: unknown) => embedder.lexicalFallback('search engine refused the hybrid query; answered lexically', err);
    if (request.vector) return { ...request, semantic: Promise.resolve({ vector: request.vector, ratio: 1 }) };
    if (request.allWords || request.lexical || embedder.semanticRatio <= 0 || isLexicalQuery(request.query)) return request;
    // Asked now and awaited once the engine has counted the query's words (adapter.ts).
    const semantic = embedder
      .queryVector(request.query)
      .then((vector) => (vector ? { vector, ratio: embedder.semanticRatio, onRefused } : null))
      .catch(() => null);
    return { ...request, semantic };
  };
  let started = false;
  let retryTimer: NodeJS.Timeout | null = null;

  /** A standby's indexes: one created just now (new, or lost while it was away) does not hold what its cursor says, and is rebuilt. */
  const prepareStandby = async (e: SearchEngine) => {
    if (!e.standby) return;
    try {
      const created = (await ensureIndex(e.standby.main.admin(), indexUid)) || (await ensureIndex(e.standby.recent.admin(), recentUid));
      if (created) await worker.standbyLost(e.position);
    } catch (err) {
      log.warn({
        msg: 'search standby not ready; its indexes are checked again when it answers',
        engine: e.position,
        err: String((err as Error)?.message ?? err),
      });
    }
  };

  /** Each reachable primary's indexes present with our settings; an index created just now is rebuilt from the database. */
  const prepareIndex = (): Promise<void> => {
    if (preparing) return preparing;
    const p = (async () => {
      let created = false;
      let recentCreated = false;
      for (const e of engines) {
        if (e.ready || !e.primaryUp()) continue;
        try {
          const c = await ensureIndex(e.primary.main.admin(), indexUid);
          const rc = await ensureIndex(e.primary.recent.admin(), recentUid);
          e.ready = true;
          created ||= c;
          recentCreated ||= rc;
          await prepareStandby(e);
          // A recent index on the main engine is not read when the recent one has an engine of its own.
          if (rc && e.primary.recent !== e.primary.main)
            await e.primary.main
              .admin()
              .deleteIndex(recentUid)
              .catch(() => undefined);
        } catch (err) {
          probeAll(e.primaryConns());
          log.warn({ msg: 'search index not ready', engine: e.position, err: String((err as Error)?.message ?? err) });
        }
      }
      try {
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
          // So is the index of the same layout with other EMBEDDINGS_* settings (or none).
          for (const c of conns) {
            const uids = await c
              .admin()
              .getIndexes({ limit: 1000 })
              .then((r) => r.results.map((i) => i.uid))
              .catch(() => [] as string[]);
            for (const uid of otherVariantsOf(config.namespace, indexUid, uids))
              await c
                .admin()
                .deleteIndex(uid)
                .catch(() => undefined);
          }
        } else if (recentCreated) {
          const n = await worker.queueRecent();
          if (n > 0) log.info({ msg: 'recent search index created; filling it with the sessions written lately', sessions: n });
        }
      } catch (err) {
        log.warn({ msg: 'search index refill not queued', err: String((err as Error)?.message ?? err) });
      }
    })().finally(() => {
      if (preparing === p) preparing = null;
    });
    preparing = p;
    return p;
  };

  const afterOutage = () =>
    void (async () => {
      await prepareIndex();
      // Work that failed while the engine was away need not wait out its back-off.
      await makeAllDue(sqlOn(pool)).catch(() => undefined);
      worker.notify();
    })();
  for (const e of engines) {
    for (const c of e.primaryConns()) {
      // After an outage an engine may come back empty (data reset): check the indexes before writing.
      c.onDown(() => {
        e.ready = false;
      });
      c.onUp(() => {
        if (started && e.primaryUp()) afterOutage();
      });
    }
    for (const c of e.standbyConns()) {
      c.onDown(() => {
        log.warn({ msg: 'search standby unavailable; it resumes from its cursor when it answers', engine: e.position });
      });
      c.onUp(() => {
        if (started && e.standbyUp()) void prepareStandby(e);
      });
    }
  }
  const embeddedEngines = [
    { engine: embedded, conn: engines[0].primary.main },
    { engine: recentEmbedded, conn: engines[0].primary.recent },
  ].filter((x): x is { engine: EmbeddedMeili; conn: (typeof engines)[0]['primary']['main'] } => x.engine !== null);

  return {
    indexUid,
    embedded,
    recentEmbedded,

    async start() {
      if (started) return;
      started = true;
      for (const { engine, conn: c } of embeddedEngines) {
        try {
          await engine.start();
        } catch (err) {
          // A binary that fails its checksum is a reason not to start; anything else is an outage.
          if (/sha256|not found/.test(String((err as Error)?.message))) throw err;
          log.error({ msg: 'embedded meilisearch did not start; search unavailable until it does', home: engine.home, err: String(err) });
        }
        engine.onChange(() => void c.checkHealth());
      }
      await allAnswer(conns);
      if (engines.some((e) => e.primaryUp())) await prepareIndex();
      for (const c of conns) c.startMonitor(1000);
      // An index that could not be prepared (engine away, or reset under us) is retried.
      retryTimer = setInterval(() => {
        if (!started) return;
        if (engines.some((e) => !e.ready && e.primaryUp())) void prepareIndex();
      }, 2000);
      retryTimer.unref();
      if (config.workersEnabled) worker.start();
      if (config.workersEnabled) sweeper?.start();
    },

    async stop() {
      if (!started) return;
      started = false;
      if (retryTimer) clearInterval(retryTimer);
      retryTimer = null;
      embedder?.close();
      await sweeper?.stop();
      await worker.stop();
      await preparing?.catch(() => undefined);
      for (const c of conns) c.close();
      for (const { engine } of embeddedEngines) await engine.stop();
    },

    async search(asked: SearchRequest): Promise<SearchPage> {
      const request = withSemantic(asked);
      const indexes = { main: indexUid, recent: recentUid };
      const recreate = (e: SearchEngine) => {
        e.ready = false;
        void prepareIndex();
      };
      if (single) return searchIndex({ conns: engines[0].primary, indexes, onIndexMissing: () => recreate(engines[0]) }, request);
      return searchEngines(
        {
          engines,
          indexes,
          onIndexMissing: (e, role) => {
            if (role === 'primary') recreate(e);
            else void worker.standbyLost(e.position).catch(() => undefined);
          },
        },
        request,
      );
    },

    termCounts(scopes, terms) {
      // Each engine's primary (its standby while it is down) counts the scopes it holds, in both
      // indexes (the sessions written lately are in the recent one only; a session in both counts twice).
      const groups = [...scopesByEngine(scopes, engines.length)];
      const pairOf = (e: SearchEngine) => (e.standby && !e.primaryUp() ? e.standby : e.primary);
      const asked = groups.flatMap(([position, held]) => {
        const pair = pairOf(engines[position]);
        return [termCounts(pair.main, indexUid, held, terms), recentTermCounts(pair.recent, recentUid, held, terms)];
      });
      return Promise.all(asked).then((parts) => sumCounts(parts, terms.length));
    },

    async sessionVector(owner, projectId, sessionId) {
      if (!embedder) return null;
      const e = engines[engineOf(owner, engines.length)];
      const pair = e.standby && !e.primaryUp() ? e.standby : e.primary;
      const id = documentIdOf(projectId, sessionId, 0);
      for (const [conn, uid] of [
        [pair.recent, recentUid],
        [pair.main, indexUid],
      ] as const) {
        try {
          const doc = await conn
            .searcher()
            .index(uid)
            .getDocument(id, { fields: ['id', 'userId'], retrieveVectors: true } as never);
          const v = vectorOf((doc as { _vectors?: Record<string, unknown> })._vectors?.[EMBEDDER]);
          // The owner the caller was allowed to read: a document of anyone else is never used.
          if (v && (doc as { userId?: string }).userId === owner) return v;
        } catch (err) {
          const c = rootCause(err);
          if (!(c instanceof MeiliHttpError && c.status === 404)) return null;
        }
      }
      return null;
    },

    embeddingStatus: () => embedder?.status() ?? null,
    isHealthy: healthy,
    notify: () => worker.notify(),
    backlog: () => worker.backlog(),
    deadLetters: () => worker.deadLetters(),
    async recentDocuments() {
      const counts = await Promise.all(engines.map(async (e) => (await e.primary.recent.admin().index(recentUid).getStats()).numberOfDocuments));
      return counts.reduce((a, b) => a + b, 0);
    },
    engineStatus: () =>
      engines.map((e) => ({
        engine: e.position,
        primaryUp: e.primaryUp(),
        standbyUp: e.standby ? e.standbyUp() : null,
        standbyState: e.standby ? e.standbyState : null,
        standbyLagSeconds: e.standby ? e.standbyLagSeconds : null,
      })),
    standbysCaughtUp: () => worker.standbysCaughtUp(),

    async reindexAll(onProgress) {
      if (!started) throw new Error('search not started');
      if (!(await allAnswer(primaryConns))) throw new Error('search engine unavailable');
      for (const e of engines) {
        await ensureIndex(e.primary.main.admin(), indexUid);
        await ensureIndex(e.primary.recent.admin(), recentUid);
        e.ready = true;
      }
      return worker.reindexAll(onProgress);
    },

    compact: (settledMs?: number) => worker.queueCompaction(settledMs),
  };
}
