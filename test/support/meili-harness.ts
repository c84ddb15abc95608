/**
 * Search under test: a fresh database, the real session services, and createSearch() against
 * the run's Meilisearch (MEILI_URL from global setup) with an index of its own (namespace = the
 * database name). Sessions are written through src/services/sessions.ts, so the outbox rows are
 * the ones the service writes.
 */
import { eventually } from './eventually';
import crypto from 'node:crypto';
import { testDataDir, testMeiliEnv } from './meili-engine';
import { loadConfig, type Config } from '../../src/config';
import { createDb, dbOptionsOf, type DbHandles } from '../../src/db/client';
import { createLogger, type Logger } from '../../src/logger';
import type { Offload } from '../../src/offload';
import { Meilisearch } from 'meilisearch';
import { createSearch, type Search } from '../../src/search';
import { engineOf } from '../../src/search/engine/placement';
import { setupEngines } from '../../src/search/setup';
import { OutboxWorker } from '../../src/search/sync/worker';
import { meiliString } from '../../src/search/engine/filter';
import { sessionDigestOf } from '../../src/domain/search-documents';
import { createNodeHttpClient } from '../../src/search/engine/http-client';
import { isIndexNotFound, recentUidOf } from '../../src/search/engine/index-settings';
import { searchSessions, type SearchResults } from '../../src/services/search';
import { depsFor, type Ctx, type Deps } from '../../src/services/context';
import type { SessionFiltersInput } from '../../src/domain/filters';
import { deleteProject } from '../../src/services/projects';
import { deleteSession } from '../../src/services/session-changes';
import { upsertSession } from '../../src/services/session-upload';
import { createUser } from '../../src/services/users';
import { operatorCtx } from '../../src/services/context';
import { createTestDatabase, type TestDatabase } from './db';
import { replicaCaughtUp } from './replica-sync';

export interface SessionInput {
  name?: string;
  markdown: string;
  metadata?: Record<string, unknown>;
}

export interface SearchHarness {
  config: Config;
  db: TestDatabase;
  handles: DbHandles;
  search: Search;
  deps: Deps;
  logger: Logger;
  /** A new user and the service context acting as them. */
  user(): Promise<Ctx>;
  put(ctx: Ctx, projectId: string, sessionId: string, input: SessionInput): Promise<void>;
  remove(ctx: Ctx, projectId: string, sessionId: string): Promise<void>;
  removeProject(ctx: Ctx, projectId: string): Promise<void>;
  find(ctx: Ctx, query: string, filters?: SessionFiltersInput, limit?: number, offset?: number): Promise<SearchResults>;
  /** The documents (fragments) both indexes hold for a session: id, chunk, hash. */
  fragments(projectId: string, sessionId: string): Promise<Array<{ id: string; chunk: number; hash: string }>>;
  /**
   * Resolves when the outbox is empty and (with a read replica) the replica has applied every
   * write: another user's write reaches a reader on the replica only then (bounded; throws after
   * `timeoutMs`).
   */
  settle(timeoutMs?: number): Promise<void>;
  /** Polls `check` until it returns true (bounded; throws with `what` after `timeoutMs`). */
  eventually(what: string, check: () => Promise<boolean>, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

export interface HarnessOptions {
  env?: Record<string, string>;
  /** Reuse a database (e.g. a second service instance on the same data). */
  db?: TestDatabase;
  /** Where large sessions' documents are built (default inline). */
  offload?: Offload;
  /** How long applied outbox rows are kept for the standbys, and the grace before a cursor passes a hole in the ids (default the service's). */
  standbyRetentionMs?: number;
  standbyGapGraceMs?: number;
}

/** How long a test waits for an engine task: the engine is shared by every suite and can be busy for seconds under CI's load. */
export const ENGINE_TASK_WAIT = { timeout: 45_000 };

export const newSessionId = () => crypto.randomUUID();

/** A random word of `length` lower-case letters: no other test's session holds it. */
export const randomWord = (length = 12) => Array.from(crypto.randomBytes(length), (b) => String.fromCharCode(97 + (b % 26))).join('');

/** A copy of a caller's context (and its user), as the next request would bring: nothing a search remembers on the object carries over. */
export const again = <C extends { user: object }>(c: C): C => ({ ...c, user: { ...c.user } });

/** The engine holding an owning scope's entries (the only one, or with TEST_MEILI_ENGINES=n its engine among them). */
export const engineUrlOf = (config: Config, scopeId: string): string => config.meiliUrls[engineOf(scopeId, config.meiliUrls.length)];

/**
 * An outbox worker of the test's own (not started) over the harness's engines: the run's engine,
 * or with TEST_MEILI_ENGINES=n its n engines. close() closes its connections.
 */
export async function testWorker(
  h: Pick<SearchHarness, 'config' | 'handles' | 'logger' | 'search'>,
  opts: { batchSize?: number } = {},
): Promise<{ worker: OutboxWorker; close: () => void }> {
  const { engines, conns } = setupEngines(h.config, h.logger);
  await Promise.all(conns.map((c) => c.checkHealth()));
  for (const e of engines) e.ready = true;
  const worker = new OutboxWorker({ pool: h.handles.pool, conn: engines[0].primary.main, engines, indexUid: h.search.indexUid, logger: h.logger, ...opts });
  return { worker, close: () => conns.forEach((c) => c.close()) };
}

export function searchTestConfig(db: TestDatabase, env: Record<string, string> = {}): Config {
  return loadConfig({
    DATABASE_URL: db.url,
    DATA_DIR: testDataDir(),
    JWT_SECRET: 'test-secret-that-is-long-enough',
    LOG_LEVEL: 'silent',
    NAMESPACE: db.name,
    // A test that names its engine (MEILI_URL, even '' for the embedded one) gets that, not the run's.
    ...(env.MEILI_URL !== undefined || env.MEILI_URLS !== undefined ? {} : testMeiliEnv()),
    // TEST_REPLICA=1: reads (the re-check of search hits among them) go through the run's replica.
    ...(process.env.TEST_REPLICA_URL ? { DATABASE_REPLICA_URL: process.env.TEST_REPLICA_URL } : {}),
    ...env,
  });
}

/**
 * The harness of a test file (or describe block): started before its tests, closed after them,
 * also when one fails. Call it at the top level of the file or block; the getter gives the
 * started harness inside a test.
 */
export function harnessForTests(opts: HarnessOptions = {}): () => SearchHarness {
  let h: SearchHarness | undefined;
  beforeAll(async () => {
    h = await startSearchHarness(opts);
  }, 60_000);
  afterAll(async () => {
    await h?.close();
  });
  return () => {
    if (!h) throw new Error('the search harness did not start');
    return h;
  };
}

/**
 * Waits until the service's indexes exist on the engines it was given. The service creates them
 * at start but waits only a few seconds for each creation; on the run's engine, busy with other
 * files' batches, a creation can come later (the service retries every 2 s), and a search before
 * it would answer "unavailable". An engine that answers otherwise (away, or a test's proxy) is
 * not waited for.
 */
async function indexesCreated(config: Config, indexUid: string): Promise<void> {
  const where = [
    ...config.meiliUrls.map((host) => ({ host, uid: indexUid, key: config.meiliMasterKey })),
    ...(config.meiliRecentUrl
      ? [{ host: config.meiliRecentUrl, key: config.meiliRecentMasterKey }]
      : config.meiliUrls.map((host) => ({ host, key: config.meiliMasterKey }))
    ).map((e) => ({ ...e, uid: recentUidOf(indexUid) })),
  ];
  for (const { host, uid, key } of where) {
    const httpClient = createNodeHttpClient();
    const client = new Meilisearch({ host, apiKey: key ?? undefined, httpClient, timeout: 5000 });
    try {
      await eventually(
        `index ${uid} on ${host}`,
        () =>
          client.getIndex(uid).then(
            () => true,
            (err: unknown) => !isIndexNotFound(err),
          ),
        60_000,
      );
    } finally {
      httpClient.destroy();
    }
  }
}

export async function startSearchHarness(opts: HarnessOptions = {}): Promise<SearchHarness> {
  const db = opts.db ?? (await createTestDatabase('sa_search'));
  const config = searchTestConfig(db, opts.env);
  const logger = createLogger(process.env.TEST_LOG_LEVEL ?? 'silent');
  const handles = createDb(config.databaseUrl, dbOptionsOf(config));
  const search = createSearch({
    config,
    db: handles,
    logger,
    offload: opts.offload,
    worker: { pollMs: 50, standbyRetentionMs: opts.standbyRetentionMs, standbyGapGraceMs: opts.standbyGapGraceMs },
  });
  try {
    await search.start();
    await indexesCreated(config, search.indexUid);
  } catch (err) {
    await search.stop().catch(() => undefined);
    await handles.close().catch(() => undefined);
    if (!opts.db) await db.drop().catch(() => undefined);
    throw err;
  }
  const deps: Deps = { config, db: handles, logger, search, offload: opts.offload };
  let users = 0;

  const h: SearchHarness = {
    config,
    db,
    handles,
    search,
    deps,
    logger,
    async user() {
      const u = await createUser(operatorCtx(handles), `search-${process.pid}-${++users}-${Date.now()}@example.test`);
      return { deps: depsFor(deps, u.id), user: { id: u.id, keyId: 'test' }, log: logger };
    },
    async put(ctx, projectId, sessionId, input) {
      await upsertSession(ctx, projectId, sessionId, { name: input.name ?? 'session', markdown: input.markdown, metadata: input.metadata });
    },
    remove: (ctx, projectId, sessionId) => deleteSession(ctx, projectId, sessionId),
    async removeProject(ctx, projectId) {
      await deleteProject(ctx, projectId);
    },
    find: (ctx, query, filters, limit = 10, offset = 0) =>
      searchSessions({ deps: depsFor(deps, ctx.user.id), user: ctx.user, log: ctx.log }, { query, filters, limit, offset }),
    async settle(timeoutMs = 30_000) {
      // Applied on the primaries, and on every standby that answers (each from its cursor).
      await eventually(
        'the search outbox to be applied, on the standbys too',
        async () => {
          if ((await search.backlog()) !== 0) return false;
          if (!(await search.standbysCaughtUp())) return false;
          return (await search.backlog()) === 0;
        },
        timeoutMs,
      );
      await replicaCaughtUp(handles);
    },
    eventually,
    async fragments(projectId, sessionId) {
      const httpClient = createNodeHttpClient();
      try {
        const docs: Array<{ id: string; chunk: number; hash: string }> = [];
        // Every engine (with several, the session's scope is on one of them).
        for (const host of config.meiliUrls) {
          const client = new Meilisearch({ host, apiKey: config.meiliMasterKey ?? undefined, httpClient, timeout: 5000 });
          for (const uid of [search.indexUid, recentUidOf(search.indexUid)]) {
            const page = await client.index(uid).getDocuments({
              filter: `sessionDigest = ${meiliString(sessionDigestOf(projectId, sessionId))}`,
              fields: ['id', 'chunk', 'hash'],
              limit: 100_000,
            });
            docs.push(...(page.results as typeof docs));
          }
        }
        return docs;
      } finally {
        httpClient.destroy();
      }
    },
    async close() {
      await search.stop();
      // Each test file has its own index: leave nothing behind in the shared engine.
      for (const host of [...config.meiliUrls, ...config.meiliStandbyUrls.filter(Boolean)]) {
        const httpClient = createNodeHttpClient();
        const client = new Meilisearch({ host, apiKey: config.meiliMasterKey ?? undefined, httpClient, timeout: 5000 });
        // Waited for: a harness started next on the same database must not find them half-deleted.
        for (const uid of [search.indexUid, recentUidOf(search.indexUid)])
          await client
            .deleteIndex(uid)
            .waitTask()
            .catch(() => undefined);
        httpClient.destroy();
      }
      await handles.close();
      if (!opts.db) await db.drop();
    },
  };
  return h;
}
