/**
 * Search benchmark: latency of searchSessions (engine + database re-check) at growing corpus
 * sizes, and index freshness (PUT through the session service → findable by search).
 *
 *   npx tsx bench/search.ts --quick          # 1k and 2k sessions
 *   npx tsx bench/search.ts                  # 10k and 100k sessions (takes a while on 2 cores)
 *   npx tsx bench/search.ts --sizes=20000 --queries=300 --freshness=50 --poll=20 --keep
 *   npx tsx bench/search.ts --sizes=100000 --freshness=0 --load-memory=2GiB --keep   # load faster, keep it
 *   npx tsx bench/search.ts --reuse=sa_bench_xxx,/tmp/sa-bench-xxx   # measure a kept corpus again
 *   npx tsx bench/search.ts --prefix-search=disabled …   # what-if: no prefix databases (no prefix matching)
 *   npx tsx bench/search.ts --teams=0 …      # no teams (by default 20 teams own half of the projects)
 *   npx tsx bench/search.ts --anchor …       # also the same sessions in a raw engine, for comparison
 *   npx tsx bench/search.ts --via=upsert …   # load as uploads do: through the recent index
 *   npx tsx bench/search.ts --indexing-threads=2 …   # the main engine's indexing threads (SEARCH_INDEXING_THREADS)
 *
 * After loading each size it prints `index: <x> engine bytes per markdown byte` and `bulk indexing:
 * <n> sessions/s (<m> MB/s of markdown)` (from the start of loading until the outbox is empty).
 * --anchor then indexes the same sessions into a raw engine of its own with default settings (one
 * document per session: its name, tags and markdown) and prints its two figures beside ours, so the
 * gap to the engine itself is visible.
 * --via=upsert writes the outbox rows uploads leave ('upsert': the recent index first, moved to
 * the main one by compaction) instead of a rebuild's or an import's ('compact': straight into the
 * main index), with the worker's own batches and compaction schedule, and prints how long after
 * the writes ended every session was searchable, and when all were in the main index (a last
 * compaction asked for at once rather than on the worker's schedule). The writes are the bench's
 * bulk inserts, faster than uploads come: the backlog at their end is larger than theirs would be.
 *
 * Uses MEILI_URL/MEILI_MASTER_KEY (and MEILI_RECENT_URL…) when set, else embedded engines (main and
 * recent index, as the service runs them; --one-engine: one for both) in a temp DATA_DIR, and a
 * fresh database on TEST_DATABASE_ROOT_URL (default mysql://root@127.0.0.1:3306), dropped at the end
 * unless --keep. --reuse=DATABASE,DATA_DIR measures a corpus kept that way (nothing is loaded or
 * dropped), with the engine at the service's own indexing memory: figures of one-session updates
 * are only meaningful at that memory, while loading is much faster with --load-memory.
 * Targets: p95 search < 50 ms at 100k sessions; p95 freshness < 1 s.
 *
 * Teams (--teams=N, default 20): besides USERS users with PROJECTS_PER_USER projects each, N teams
 * own PROJECTS_PER_TEAM projects each, and the sessions are spread over all of them (so with 20
 * teams half of the corpus is the teams'). TEAMMATES further users own nothing and are members of
 * every team: a search by one of them reads N + 1 owner scopes, and the team sessions are
 * uploaded by them (`uploadedBy`). The users' own searches measure the path of a user without
 * teams.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Meilisearch } from 'meilisearch';
import { loadConfig } from '../src/config';
import { createDb } from '../src/db/client';
import { createLogger } from '../src/logger';
import { createSearch } from '../src/search';
import { EmbeddedMeili } from '../src/search/embedded/embedded';
import { pageAttributes } from '../src/search/engine/adapter';
import { countedPage } from '../src/search/engine/counted-page';
import { forgetCounts } from '../src/search/engine/count-cache';
import { federatedPage, federatedQueries, wordCounts } from '../src/search/engine/planned-page';
import { planQuery } from '../src/search/engine/query-plan';
import { searchFilter } from '../src/search/engine/filter';
import { createNodeHttpClient } from '../src/search/engine/http-client';
import { sessionsMatchingAmong } from '../src/data/sessions';
import { scopesFor } from '../src/services/access';
import { membershipsOfUser } from '../src/data/teams';
import { relatedSessions } from '../src/services/related';
import { searchSessions } from '../src/services/search';
import type { Ctx, Deps } from '../src/services/context';
import { upsertSession } from '../src/services/session-upload';
import { tuneHeap } from '../src/http/fast/heap';
import { databaseNamed, freshDatabase, percentile, type BenchDatabase } from './support';
import { generateSession, insertCorpus, rng, vocabulary } from './corpus';

/** Written to the data dir by --keep: the queries sampled while loading, for --reuse. */
const QUERIES_FILE = 'bench-queries.json';
const arg = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
const quick = process.argv.includes('--quick');
const sizes = (arg('sizes') ?? (quick ? '1000,2000' : '10000,100000')).split(',').map(Number);
const QUERIES = Number(arg('queries') ?? (quick ? 100 : 300));
const FRESHNESS_RUNS = Number(arg('freshness') ?? (quick ? 15 : 50));
const USERS = Number(arg('users') ?? 10);
const PROJECTS_PER_USER = 10;
const TEAMS = Number(arg('teams') ?? 20);
const PROJECTS_PER_TEAM = 5;
const TEAMMATES = 10;
/** How often the freshness probe searches (each probe is a search competing with indexing for CPU). */
const POLL_MS = Number(arg('poll') ?? 20);
/** Sessions rewritten, then moved by one compaction (freshness section). */
const COMPACTED = Number(arg('compacted') ?? (quick ? 100 : 500));
const reuse = arg('reuse')?.split(',');
const via = (arg('via') ?? 'compact') as 'compact' | 'upsert';
if (via !== 'compact' && via !== 'upsert') throw new Error('--via=compact|upsert');
if (reuse && (reuse.length !== 2 || !fs.existsSync(path.join(reuse[1], QUERIES_FILE)))) {
  throw new Error(`--reuse=DATABASE,DATA_DIR: a database and data dir kept by --keep (with ${QUERIES_FILE})`);
}

const fmt = (ms: number) => (ms < 10 ? ms.toFixed(2) : ms.toFixed(1));
const now = () => performance.now();
const log = (s: string) => process.stdout.write(`${s}\n`);

/** What a failed or interrupted run undoes, last first: engines stopped, and a corpus of its own dropped. */
const onFailure: Array<() => unknown> = [];

async function main() {
  // The service's heap settings, as src/main.ts applies them (src/http/fast/heap.ts).
  tuneHeap();
  const db: BenchDatabase = reuse ? databaseNamed(reuse[0]) : await freshDatabase('sa_bench');
  const dataDir = reuse ? reuse[1] : fs.mkdtempSync(path.join(os.tmpdir(), 'sa-bench-'));
  if (!reuse)
    onFailure.push(
      () => db.drop(),
      () => fs.rmSync(dataDir, { recursive: true, force: true }),
    );
  let engine: EmbeddedMeili | null = null;
  let recentEngine: EmbeddedMeili | null = null;
  if (!process.env.MEILI_URL) {
    // --load-memory: a bigger indexing memory for loading large corpora faster (one-session
    // updates get slower with it, so freshness figures are only meaningful without it).
    const threads = arg('indexing-threads');
    engine = new EmbeddedMeili({ dataDir, maxIndexingMemory: arg('load-memory'), maxIndexingThreads: threads ? Number(threads) : undefined });
    // As the service runs them: the recent index on an engine of its own (--one-engine: not).
    if (!process.argv.includes('--one-engine')) recentEngine = new EmbeddedMeili({ dataDir, name: 'meilisearch-recent' });
    const engines = recentEngine ? [engine, recentEngine] : [engine];
    onFailure.push(() => Promise.all(engines.map((e) => e.stop())));
    // Both started (or failed) before going on: one that did start is stopped if the other failed.
    const started = await Promise.allSettled(engines.map((e) => e.start()));
    for (const s of started) if (s.status === 'rejected') throw s.reason;
  }
  const config = loadConfig({
    DATABASE_URL: db.url,
    DATA_DIR: dataDir,
    JWT_SECRET: 'bench-secret-that-is-long-enough',
    LOG_LEVEL: 'silent',
    NAMESPACE: db.name,
    MEILI_URL: process.env.MEILI_URL ?? engine!.url!,
    MEILI_MASTER_KEY: process.env.MEILI_MASTER_KEY ?? engine!.masterKey,
    MEILI_RECENT_URL: process.env.MEILI_RECENT_URL ?? recentEngine?.url ?? '',
    MEILI_RECENT_MASTER_KEY: process.env.MEILI_RECENT_MASTER_KEY ?? recentEngine?.masterKey ?? '',
  });
  const logger = createLogger('silent');
  const handles = createDb(config.databaseUrl);
  // Compaction only when the freshness section asks for it, to time it (--via=upsert: the
  // worker's own batches and schedule, as uploads meet them).
  const search = createSearch({
    config,
    db: handles,
    logger,
    worker: via === 'upsert' ? { pollMs: 100 } : { batchSize: 500, pollMs: 100, compactEveryMs: Number.MAX_SAFE_INTEGER, recentMax: Number.MAX_SAFE_INTEGER },
  });
  await search.start();
  // What-if: the engine without prefix databases (no prefix matching; see index-settings.ts).
  const prefixSearch = arg('prefix-search');
  if (prefixSearch === 'disabled' || prefixSearch === 'indexingTime') {
    const admin = new Meilisearch({ host: config.meiliUrl!, apiKey: config.meiliMasterKey!, httpClient: createNodeHttpClient() });
    const task = await admin.index(search.indexUid).updatePrefixSearch(prefixSearch).waitTask({ timeout: 3_600_000 });
    if (task.status !== 'succeeded') throw new Error(`prefixSearch: ${task.error?.message}`);
  } else if (prefixSearch) throw new Error('--prefix-search=disabled|indexingTime');
  const deps: Deps = { config, db: handles, logger, search };
  const pool = handles.pool;

  let users: Array<{ id: string; email: string }>;
  let projects: Array<{ id: string; ownerId: string }>;
  /** Members of every team (own nothing); the teams' projects are in `projects` too. */
  let teammates: Array<{ id: string; email: string }> = [];
  let teamCount = 0;
  /** The teams' ids (their members search through all of them). */
  let teamIds: string[] = [];
  let queryPool: string[] = [];
  let loaded = 0;
  let bytesLoaded = 0;
  if (reuse) {
    users = await pool.query("SELECT id, email FROM users WHERE email LIKE 'bench%' ORDER BY email");
    teammates = await pool.query("SELECT id, email FROM users WHERE email LIKE 'teammate%' ORDER BY email");
    // In the order they were created: users[0] owns projects[0] (the freshness section writes
    // there); the teams' projects after the users'.
    projects = await pool.query('SELECT p.id, p.ownerId FROM projects p LEFT JOIN users u ON u.id = p.ownerId ORDER BY u.email IS NULL, u.email, p.id');
    const [{ n }] = await pool.query('SELECT COUNT(*) AS n FROM teams');
    teamCount = Number(n);
    teamIds = (await pool.query<Array<{ id: string }>>('SELECT id FROM teams')).map((t) => t.id);
    queryPool = JSON.parse(fs.readFileSync(path.join(dataDir, QUERIES_FILE), 'utf8'));
    const [row] = await pool.query("SELECT COUNT(*) AS n, SUM(markdownSize) AS bytes FROM sessions WHERE name <> 'fresh'");
    loaded = Number(row.n);
    bytesLoaded = Number(row.bytes);
    sizes.splice(0, sizes.length, loaded);
  } else {
    users = Array.from({ length: USERS }, (_, i) => ({ id: crypto.randomUUID(), email: `bench${i}@example.test` }));
    projects = users.flatMap((u) => Array.from({ length: PROJECTS_PER_USER }, (_, j) => ({ id: `p-${u.id.slice(0, 8)}-${j}`, ownerId: u.id })));
    await insertCorpus(pool, { users, projects });
    if (TEAMS > 0) {
      teammates = Array.from({ length: TEAMMATES }, (_, i) => ({ id: crypto.randomUUID(), email: `teammate${i}@example.test` }));
      await insertCorpus(pool, { users: teammates });
      const teams = Array.from({ length: TEAMS }, (_, i) => ({ id: crypto.randomUUID(), name: `Team ${i}` }));
      await pool.query(
        `INSERT INTO teams (id, name) VALUES ${teams.map(() => '(?, ?)').join(', ')}`,
        teams.flatMap((t) => [t.id, t.name]),
      );
      const members = teams.flatMap((t) => teammates.map((u, i) => [t.id, u.id, i === 0 ? 'admin' : 'member']));
      await pool.query(`INSERT INTO team_members (teamId, userId, role) VALUES ${members.map(() => '(?, ?, ?)').join(', ')}`, members.flat());
      const teamProjects = teams.flatMap((t) =>
        Array.from({ length: PROJECTS_PER_TEAM }, (_, j) => ({ id: `t-${t.id.slice(0, 8)}-${j}`, ownerId: t.id, ownerType: 'team' as const })),
      );
      await insertCorpus(pool, { projects: teamProjects });
      projects.push(...teamProjects);
      teamCount = TEAMS;
      teamIds = teams.map((t) => t.id);
    }
  }
  const personal = new Set(users.map((u) => u.id));
  /** Who uploaded a session: the owning user, or (team projects) one of the teammates. */
  const uploaderOf = (ownerId: string, seed: number) => (personal.has(ownerId) ? ownerId : teammates[seed % teammates.length].id);

  const words = vocabulary();
  const r = rng(2024);
  const results: string[] = [];
  log(
    `search benchmark: sizes ${sizes.join(', ')}; ${users.length} users` +
      (teamCount
        ? `, ${teamCount} teams (${projects.length - users.length * PROJECTS_PER_USER} of ${projects.length} projects) and ${teammates.length} members of every team`
        : '') +
      `; ${QUERIES} queries; engine ${config.meiliUrl}`,
  );

  const benchQueries = () => Array.from({ length: QUERIES }, (_, i) => queryPool[i % queryPool.length]);
  const userOf = (i: number) => users[i % users.length].id;
  // Each caller's memberships as authentication reads them with the credential (key or browser
  // session, in the same statement): a context made by a request carries them.
  const membershipsOf = new Map<string, string>();
  for (const { id } of [...users, ...teammates]) {
    membershipsOf.set(id, (await membershipsOfUser(deps.db.writes, id)).map((m) => `${m.teamId}:${m.role}`).join(','));
  }
  const caller = (id: string): Ctx => ({ deps, user: { id, keyId: 'bench', memberships: membershipsOf.get(id) }, log: logger });
  /** The i-th query's caller, as a service context. */
  const callerOf = (i: number): Ctx => caller(userOf(i));
  /** The i-th query's caller among the members of every team. */
  const teammateOf = (i: number): Ctx => caller(teammates[i % teammates.length].id);
  const timeIt = async (count: number, fn: (i: number) => Promise<unknown>) => {
    const xs: number[] = [];
    for (let i = 0; i < count; i++) {
      const t = now();
      await fn(i);
      xs.push(now() - t);
    }
    return xs;
  };
  /**
   * Like timeIt for several functions, taken in turn on each i, each one first in turn: on i,
   * fns[i % n](i) first, then the next ones, round. The first request for a query costs the
   * engine more than the same request right after it (~0.3 ms p50 at 10k here: its pages were
   * just read); always first, one function would carry that for all of them.
   */
  const timeInTurn = async (count: number, fns: Array<(i: number) => Promise<unknown>>) => {
    const xs: number[][] = fns.map(() => []);
    for (let i = 0; i < count; i++) {
      for (let step = 0; step < fns.length; step++) {
        const k = (i + step) % fns.length;
        const t = now();
        await fns[k](i);
        xs[k][i] = now() - t;
      }
    }
    return xs;
  };
  const row = (label: string, xs: number[], target?: string) =>
    `  ${label.padEnd(44)} p50 ${fmt(percentile(xs, 50)).padStart(6)} ms   p95 ${fmt(percentile(xs, 95)).padStart(6)} ms${target ? `   (target ${target})` : ''}`;

  // The raw engine for --anchor: default settings, one document per session.
  let anchorEngine: EmbeddedMeili | null = null;
  let anchored = 0;
  let anchorBytes = 0;
  const anchor = async (size: number): Promise<string> => {
    if (!anchorEngine) {
      anchorEngine = new EmbeddedMeili({ dataDir, name: 'meilisearch-anchor', maxIndexingMemory: arg('load-memory') });
      onFailure.push(() => anchorEngine!.stop());
      await anchorEngine.start();
    }
    const client = new Meilisearch({ host: anchorEngine.url!, apiKey: anchorEngine.masterKey, httpClient: createNodeHttpClient() });
    const index = client.index('anchor');
    const t = now();
    const added = size - anchored;
    const bytesAtStart = anchorBytes;
    // Pushed without waiting, then waited for: the engine applies what is queued as one batch
    // (its best rate; waiting for each push of 500, it ran at 131 sessions/s at 100k, 2026-11-30).
    const tasks: number[] = [];
    for (let start = anchored; start < size; start += 500) {
      const docs = Array.from({ length: Math.min(500, size - start) }, (_, i) => {
        const seed = start + i + 1;
        const g = generateSession(seed, words);
        anchorBytes += Buffer.byteLength(g.markdown);
        return { id: String(seed), name: g.name, tags: g.tags, markdown: g.markdown };
      });
      tasks.push((await index.addDocuments(docs, { primaryKey: 'id' })).taskUid);
    }
    for (const uid of tasks) {
      const task = await client.tasks.waitForTask(uid, { timeout: 24 * 3_600_000 });
      if (task.status !== 'succeeded') throw new Error(`anchor indexing: ${task.error?.message}`);
    }
    anchored = size;
    const seconds = (now() - t) / 1000;
    const { usedDatabaseSize } = await client.getStats();
    return (
      `  anchor (a raw engine, default settings, one document per session):\n` +
      `    index: ${(usedDatabaseSize / anchorBytes).toFixed(2)} engine bytes per markdown byte\n` +
      `    bulk indexing: ${Math.round(added / seconds)} sessions/s (${((anchorBytes - bytesAtStart) / 1048576 / seconds).toFixed(2)} MB/s of markdown)`
    );
  };
  let bytesBefore = bytesLoaded;

  for (const size of sizes) {
    // Load: rows, content and outbox rows in bulk, then let the worker index them. 'compact' rows
    // go straight to the main index, as a rebuild's do; 'upsert' rows (--via=upsert) through the
    // recent index, as an upload's do (an import's are 'compact' rows).
    const t0 = now();
    for (let start = loaded; start < size; start += 500) {
      const batch = Array.from({ length: Math.min(500, size - start) }, (_, i) => {
        const seed = start + i + 1;
        const s = generateSession(seed, words);
        const project = projects[seed % projects.length];
        const created = new Date(Date.now() - Math.floor(r() * 90 * 86400_000));
        // Queries that hit: two words from one sentence of a sampled session.
        if (queryPool.length < 2000 && r() < 0.05) {
          const sentence = s.markdown.split(/[.\n]/).filter((x) => x.split(' ').length > 6)[0];
          const ws = sentence?.toLowerCase().match(/[a-z]{4,}/g);
          if (ws && ws.length >= 3) queryPool.push(`${ws[1]} ${ws[2]}`);
        }
        const uploadedBy = uploaderOf(project.ownerId, seed);
        return { ...s, id: crypto.randomUUID(), projectId: project.id, userId: project.ownerId, uploadedBy, created, md: Buffer.from(s.markdown) };
      });
      await insertCorpus(pool, { sessions: batch, outbox: via });
      bytesLoaded += batch.reduce((n, s) => n + s.md.length, 0);
      search.notify();
    }
    const tInserted = now();
    let lastReport = now();
    const drained = async (pending: () => Promise<number>) => {
      for (;;) {
        const backlog = await pending();
        if (backlog === 0) return now();
        if (now() - lastReport > 10_000) {
          log(`  indexing… ${backlog} outbox rows to go`);
          lastReport = now();
        }
        await new Promise((res) => setTimeout(res, 200));
      }
    };
    let viaRecent = '';
    if (via === 'upsert') {
      // Searchable: every written session in the recent index or the main one.
      const uploads = async () =>
        Number((await pool.query("SELECT COUNT(*) AS n FROM search_outbox WHERE doneAt IS NULL AND op IN ('upsert', 'upsert_large')"))[0].n);
      const tSearchable = await drained(uploads);
      const minutes = (ms: number) => (ms / 60_000).toFixed(1);
      viaRecent =
        `  through the recent index (upsert rows): every session searchable ${minutes(tSearchable - tInserted)} min after the writes ended ` +
        `(${Math.round((size - loaded) / ((tSearchable - t0) / 1000))} sessions/s from the first write)`;
      // The worker's own compactions first (asking for one meanwhile would queue its sessions twice).
      await drained(() => search.backlog());
      await search.compact();
      viaRecent += `; all in the main index ${minutes((await drained(() => search.backlog())) - tInserted)} min after (a last compaction asked for)`;
    }
    const tIndexed = await drained(() => search.backlog());
    const added = size - loaded;
    loaded = size;
    const engine = new Meilisearch({ host: config.meiliUrl!, apiKey: config.meiliMasterKey!, httpClient: createNodeHttpClient() });
    const stats = await engine.index(search.indexUid).getStats();
    // Disk per session, for sizing: the main engine's whole database (it holds only the main
    // index) and the archive's tables (InnoDB's estimates, content chunks included).
    const { databaseSize, usedDatabaseSize } = await engine.getStats();
    const [tables] = await pool.query('SELECT SUM(data_length + index_length) AS bytes FROM information_schema.tables WHERE table_schema = ?', [db.name]);
    const perSession = (bytes: number) => `${(bytes / size / 1024).toFixed(1)} KB per session`;
    const loadSeconds = (tIndexed - t0) / 1000;
    log(
      `\n== ${size} sessions (${(bytesLoaded / 1048576).toFixed(0)} MB markdown, ${stats.numberOfDocuments} documents)\n` +
        `  load: ${added} sessions written in ${((tInserted - t0) / 1000).toFixed(1)} s, indexed in ${((tIndexed - tInserted) / 1000).toFixed(1)} s ` +
        `(${Math.round(added / ((tIndexed - t0) / 1000))} sessions/s)\n` +
        `  disk: engine ${(usedDatabaseSize / 1048576).toFixed(0)} MB used of ${(databaseSize / 1048576).toFixed(0)} MB (${perSession(usedDatabaseSize)}), ` +
        `database ${(Number(tables.bytes) / 1048576).toFixed(0)} MB (${perSession(Number(tables.bytes))})\n` +
        `  index: ${(usedDatabaseSize / bytesLoaded).toFixed(2)} engine bytes per markdown byte\n` +
        `  bulk indexing: ${Math.round(added / loadSeconds)} sessions/s (${((bytesLoaded - bytesBefore) / 1048576 / loadSeconds).toFixed(2)} MB/s of markdown)` +
        (viaRecent ? `\n${viaRecent}` : ''),
    );
    bytesBefore = bytesLoaded;
    // Written as soon as the corpus is loaded: a run stopped after this can still be measured with --reuse.
    if (process.argv.includes('--keep') && !reuse) fs.writeFileSync(path.join(dataDir, QUERIES_FILE), JSON.stringify(queryPool));
    if (process.argv.includes('--anchor')) log(await anchor(size));

    // Latency of the whole service path: validation, engine (page + matching fragments), re-check.
    const queries = benchQueries();
    // Warm-up: every query once (an engine just restarted on a kept corpus reads its pages from disk).
    for (let i = 0; i < queries.length; i++) await searchSessions(callerOf(i), { query: queries[i] });
    let hitCount = 0;
    // The engine alone, same requests as the service's main index (countedPage: the page and its
    // count, retrieving what a search with matching exchanges does), node:http keep-alive vs the
    // global fetch the client uses by default.
    const params = (i: number, matchingExchanges = true) => ({
      filter: searchFilter([userOf(i)], {}),
      distinct: 'sessionDigest',
      matchingStrategy: 'all' as const,
      showRankingScore: true,
      attributesToRetrieve: pageAttributes(matchingExchanges),
    });
    const engineClient = new Meilisearch({ host: config.meiliUrl!, apiKey: config.meiliMasterKey!, httpClient: createNodeHttpClient() });
    const viaHttp = engineClient.index(search.indexUid);
    // The engine alone, asked what the service asks its main index for a query (query-plan.ts):
    // the words' counts, then the federated page; one plain request when the plan has no more.
    const planned = async (i: number) => {
      const plan = planQuery(queries[i]);
      const p = params(i);
      const counts = plan.words.length > 1 ? await wordCounts(engineClient, search.indexUid, plan, p.filter) : undefined;
      const federated = federatedQueries(plan, counts);
      return federated ? federatedPage(engineClient, search.indexUid, federated, p, 0, 10) : countedPage(viaHttp, plan.q, p, 0, 10);
    };
    const viaFetch = new Meilisearch({ host: config.meiliUrl!, apiKey: config.meiliMasterKey! }).index(search.indexUid);
    // The service (with and without matching exchanges) and the engine alone, taken in turn on
    // each query: a machine whose load drifts during the run (right after a load it is still
    // writing the engine's pages back) weighs on all of them alike, so their ratios compare.
    const [full, lean, uncounted, engineHttp, engineLean] = await timeInTurn(queries.length, [
      async (i) => {
        const res = await searchSessions(callerOf(i), { query: queries[i] });
        if (res.results.length) hitCount++;
      },
      (i) => searchSessions(callerOf(i), { query: queries[i], matchingExchanges: false }),
      // What a GraphQL query selecting neither `total` nor matching exchanges asks.
      (i) => searchSessions(callerOf(i), { query: queries[i], matchingExchanges: false, countTotal: false }),
      (i) => countedPage(viaHttp, queries[i], params(i), 0, 10),
      (i) => countedPage(viaHttp, queries[i], params(i, false), 0, 10),
    ]);
    // The same with no word counts remembered (count-cache.ts): what a query not asked in the
    // last 30 s costs. (Above, each query's counts were asked in the warm-up a moment before.)
    // And the engine's own nearest way not to require every word, in one request: `frequency`
    // drops the commonest words until something matches (the rarest one is still required).
    const [fullAfresh, enginePlanned, engineAgain, engineFrequency] = await timeInTurn(queries.length, [
      (i) => {
        forgetCounts();
        return searchSessions(callerOf(i), { query: queries[i] });
      },
      (i) => {
        forgetCounts();
        return planned(i);
      },
      (i) => countedPage(viaHttp, queries[i], params(i), 0, 10),
      (i) => countedPage(viaHttp, queries[i], { ...params(i), matchingStrategy: 'frequency' as const }, 0, 10),
    ]);
    const engineFetch = quick ? null : await timeIt(queries.length, (i) => countedPage(viaFetch, queries[i], params(i), 0, 10));
    // The users' search in its steps, as searchSessions runs them: the search port (both
    // indexes, snippets; with and without matching exchanges), the database re-check.
    const userScopes = await Promise.all(queries.map((_, i) => scopesFor(callerOf(i))));
    const userIds: string[][] = [];
    const userPort = (matchingExchanges: boolean) =>
      timeIt(queries.length, async (i) => {
        const page = await search.search({ scopes: userScopes[i], query: queries[i], filters: {}, limit: 10, offset: 0, matchingExchanges });
        userIds[i] = [...new Set(page.hits.map((h) => h.sessionId))];
      });
    const userPortFull = await userPort(true);
    const userPortLean = await userPort(false);
    const userRecheck = await timeIt(queries.length, (i) => sessionsMatchingAmong(deps.db.reads, userScopes[i], {}, userIds[i]));

    // Each query's service time less its engine-only time (taken right after it): the service's
    // share without most of the machine's drift, which the p95s' ratio carries.
    const shareFull = full.map((x, i) => x - engineHttp[i]);
    const shareLean = lean.map((x, i) => x - engineLean[i]);
    const target = size >= 100_000 ? 'p95 < 50 ms at 100k' : 'p95 < 50 ms at 100k; this size is smaller';
    const lines = [
      row('searchSessions (with matchingExchanges)', full, target),
      row('searchSessions (without matchingExchanges)', lean),
      row('searchSessions (without matchingExchanges or total)', uncounted),
      row('engine only, node:http keep-alive', engineHttp),
      row('engine only, what a search without exch. gets', engineLean),
      row('searchSessions, no word counts remembered', fullAfresh, target),
      row("  engine only, the service's plan (main index)", enginePlanned),
      row('  engine only, beside them', engineAgain),
      row("  engine only, one request, the engine's `frequency`", engineFrequency),
      row('  service less engine, same query, with exch.', shareFull),
      row('  service less engine, same query, without', shareLean),
      ...(engineFetch ? [row('engine only, global fetch (not used)', engineFetch)] : []),
      row(`  user's steps: search port (with exchanges)`, userPortFull),
      row(`  user's steps: search port (without exchanges)`, userPortLean),
      row(`  user's steps: database re-check`, userRecheck),
      `  ${hitCount}/${queries.length} queries had results`,
    ];
    // Related sessions (src/services/related.ts) of one of the caller's sessions, a different one per query.
    const picks = await Promise.all(
      queries.map(async (_, i) => {
        const own = await pool.query<Array<{ projectId: string; id: string }>>('SELECT projectId, id FROM sessions WHERE userId = ? ORDER BY id LIMIT 50', [
          userOf(i),
        ]);
        return own[i % own.length];
      }),
    );
    const related = await timeIt(queries.length, (i) => relatedSessions(callerOf(i), picks[i].projectId, picks[i].id, 5));
    const relatedAfresh = await timeIt(queries.length, (i) => {
      forgetCounts();
      return relatedSessions(callerOf(i), picks[i].projectId, picks[i].id, 5);
    });
    const relatedTarget = size >= 100_000 ? 'p95 <= 150 ms at 100k' : 'p95 <= 150 ms at 100k; this size is smaller';
    // 300 calls over 50 sessions: most find their counts remembered from an earlier call.
    lines.push(row('relatedSessions (limit 5)', related, relatedTarget), row('relatedSessions, no counts remembered', relatedAfresh, relatedTarget));
    if (teammates.length) {
      // A member of every team: N + 1 owner scopes, half of the corpus readable.
      for (let i = 0; i < queries.length; i++) await searchSessions(teammateOf(i), { query: queries[i] });
      let teamHits = 0;
      const team = await timeIt(queries.length, async (i) => {
        const res = await searchSessions(teammateOf(i), { query: queries[i] });
        if (res.results.length) teamHits++;
      });
      const teamLean = await timeIt(queries.length, (i) => searchSessions(teammateOf(i), { query: queries[i], matchingExchanges: false }));
      // Narrowed to the sessions the caller uploaded.
      const uploader = (i: number) => ({ uploaderIds: [teammates[i % teammates.length].id] });
      const byUploader = await timeIt(queries.length, (i) => searchSessions(teammateOf(i), { query: queries[i], filters: uploader(i) }));
      // The engine alone on the member's request (their own scope and every team's): what of the
      // member's time is the engine's ranking over half of the corpus, and what the service's.
      const memberParams = (i: number) => ({ ...params(i), filter: searchFilter([teammates[i % teammates.length].id, ...teamIds], {}) });
      const engineMember = await timeIt(queries.length, (i) => countedPage(viaHttp, queries[i], memberParams(i), 0, 10));
      // The member's search in its steps, as searchSessions runs them: the search port (both
      // indexes, snippets), the database re-check of the page.
      const scopesOf = await Promise.all(queries.map((_, i) => scopesFor(teammateOf(i))));
      const pageIds: string[][] = [];
      const portTime = await timeIt(queries.length, async (i) => {
        const page = await search.search({ scopes: scopesOf[i], query: queries[i], filters: {}, limit: 10, offset: 0, matchingExchanges: false });
        pageIds[i] = [...new Set(page.hits.map((h) => h.sessionId))];
      });
      const recheckTime = await timeIt(queries.length, (i) => sessionsMatchingAmong(deps.db.reads, scopesOf[i], {}, pageIds[i]));
      lines.push(
        row(`member of ${teamCount} teams (with matchingExchanges)`, team, target),
        row(`member of ${teamCount} teams (without matchingExchanges)`, teamLean),
        row(`member of ${teamCount} teams, uploaderIds = self`, byUploader),
        row(`engine only, member of ${teamCount} teams`, engineMember),
        row(`  member's steps: search port (without exchanges)`, portTime),
        row(`  member's steps: database re-check`, recheckTime),
        `  ${teamHits}/${queries.length} queries of the member had results`,
      );
    }
    for (const l of lines) log(l);
    results.push(`${size} sessions:\n${lines.join('\n')}`);
  }

  // Freshness: PUT (service call, outbox in the same transaction) → findable by the new word.
  // "rewrite": every PUT replaces the whole markdown; "append": a live session growing by an exchange;
  // "large": a session over 64 KB growing by an exchange (indexed in the main index, in fragments).
  const ctx = caller(users[0].id);
  const freshLines: string[] = [];
  const untilFound = async (sessionId: string, w: string) => {
    const t = now();
    for (;;) {
      const res = await searchSessions(ctx, { query: w, matchingExchanges: false });
      if (res.results.some((x) => x.sessionId === sessionId)) return now() - t;
      if (now() - t > 60_000) throw new Error('freshness: not found after 60 s');
      await new Promise((res2) => setTimeout(res2, POLL_MS));
    }
  };
  const drained = async () => {
    while ((await search.backlog()) > 0) await new Promise((res) => setTimeout(res, 100));
  };
  const randomWord = () => Array.from(crypto.randomBytes(10), (b) => String.fromCharCode(97 + (b % 26))).join('');
  for (const mode of FRESHNESS_RUNS > 0 ? (['rewrite', 'append', 'large'] as const) : []) {
    const fresh: number[] = [];
    const sessionId = crypto.randomUUID();
    const projectId = projects[0].id;
    let md = generateSession(2_000_000, words).markdown;
    for (let k = 1; mode === 'large' && md.length < 200_000; k++) md += `\n\n${generateSession(2_000_000 + k, words).markdown}`;
    for (let i = 0; i < (mode === 'large' ? Math.min(FRESHNESS_RUNS, 10) : FRESHNESS_RUNS); i++) {
      const w = randomWord();
      const exchange = `## User\n\nWhat about ${w}?\n\n## Assistant\n\n${generateSession(3_000_000 + i, words, 600).markdown}`;
      md = mode === 'rewrite' ? generateSession(1_000_000 + i, words).markdown + `\n\n${exchange}` : md + `\n\n${exchange}`;
      await upsertSession(ctx, projectId, sessionId, { name: 'fresh', markdown: md });
      fresh.push(await untilFound(sessionId, w));
    }
    freshLines.push(
      `  freshness, ${mode.padEnd(8)} (PUT → found)         p50 ${fmt(percentile(fresh, 50)).padStart(6)} ms   p95 ${fmt(percentile(fresh, 95)).padStart(6)} ms   (target p95 < 1000 ms)`,
    );
  }
  if (FRESHNESS_RUNS > 0) {
    // Compaction: sessions written lately move from the recent index to the main one in one
    // batch, and a PUT made meanwhile waits for that batch (the engine runs one at a time).
    const rewritten: Array<{ projectId: string; id: string; uploadedBy: string }> = await pool.query(
      "SELECT projectId, id, COALESCE(uploadedBy, userId) AS uploadedBy FROM sessions WHERE name <> 'fresh' ORDER BY id LIMIT ?",
      [COMPACTED],
    );
    for (const [i, s] of rewritten.entries()) {
      // Its uploader (a team session's: the teammate, who may rewrite the sessions they uploaded).
      const owner = caller(s.uploadedBy);
      // A word of this run's at the end: a rewrite identical to the last run's would change nothing.
      const markdown = `${generateSession(4_000_000 + i, words).markdown}\n\n${randomWord()}\n`;
      await upsertSession(owner, s.projectId, s.id, { name: 'rewritten', markdown });
    }
    await drained();
    // Search by users who have sessions in the recent index: the main index is then asked after it.
    const queries = benchQueries();
    const withRecent = await timeIt(queries.length, (i) => searchSessions(callerOf(i), { query: queries[i] }));
    freshLines.push(row(`searchSessions, ~${Math.round(rewritten.length / users.length)} recent sessions per user`, withRecent));
    const t0 = now();
    const moved = await search.compact();
    await new Promise((res) => setTimeout(res, 200));
    const sessionId = crypto.randomUUID();
    const w = randomWord();
    await upsertSession(ctx, projects[0].id, sessionId, { name: 'fresh', markdown: `# During compaction\n\n${w}\n` });
    const during = await untilFound(sessionId, w);
    await drained();
    freshLines.push(`  compaction: ${moved} sessions moved to the main index in ${fmt(now() - t0)} ms; a PUT made meanwhile was found after ${fmt(during)} ms`);
    log(`\n== freshness (${FRESHNESS_RUNS} PUTs each, ${loaded} sessions indexed, searched every ${POLL_MS} ms)\n${freshLines.join('\n')}`);
  }

  await search.stop();
  await handles.close();
  await engine?.stop();
  await recentEngine?.stop();
  await (anchorEngine as EmbeddedMeili | null)?.stop();
  if (reuse) return;
  if (!process.argv.includes('--keep')) {
    await db.drop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  } else {
    log(`kept database ${db.name} and ${dataDir}; measure them again with --reuse=${db.name},${dataDir}`);
  }
}

const undoAll = async () => {
  for (const undo of onFailure.splice(0).reverse())
    await Promise.resolve()
      .then(undo)
      .catch(() => undefined);
};
// Interrupted or stopped: undone as after a failure (engines stopped, a corpus of its own dropped).
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void undoAll().then(() => process.exit(130)));

main().catch(async (err) => {
  console.error(err);
  await undoAll();
  process.exit(1);
});
