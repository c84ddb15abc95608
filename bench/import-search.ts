/**
 * An import, searchable: sessions of the bench corpus (bench/corpus.ts) exported from one
 * database and imported into a second one through the import service (as `POST /api/v1/import`
 * runs it), with the search worker of a running service on the second (its embedded engines,
 * main and recent, in a temp data dir). Prints the import's own rate, and how long after its end
 * every session was searchable (the outbox empty), with the main index's documents and the
 * engine bytes per markdown byte.
 *
 *   npx tsx bench/import-search.ts [--sessions=100000] [--load-memory=2GiB]
 *
 * The first database gets its rows in bulk (bench/corpus.ts, no outbox); the export and import
 * are the services'. Both databases, the archive file and the data dir are removed at the end,
 * also on failure.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Meilisearch } from 'meilisearch';
import { loadConfig } from '../src/config';
import { createDb } from '../src/db/client';
import { createLogger } from '../src/logger';
import { createOffload } from '../src/offload';
import { createSearch } from '../src/search';
import { EmbeddedMeili } from '../src/search/embedded/embedded';
import { createNodeHttpClient } from '../src/search/engine/http-client';
import { recentUidOf } from '../src/search/engine/index-settings';
import type { Ctx, Deps } from '../src/services/context';
import { operatorCtx } from '../src/services/context';
import { openExport } from '../src/services/exports';
import { importArchive } from '../src/services/imports';
import { createUser } from '../src/services/users';
import { generateSession, insertCorpus, vocabulary } from './corpus';
import { arg, freshDatabase, sleep } from './support';

const SESSIONS = Number(arg('sessions') ?? 100_000);
const PROJECTS = 20;
const MiB = 1024 * 1024;
const log = (s: string) => process.stdout.write(`${s}\n`);
const seconds = (from: number) => (performance.now() - from) / 1000;

/** What the run undoes at its end, last first. */
const cleanup: Array<() => unknown> = [];

async function main(): Promise<void> {
  const tag = crypto.randomBytes(3).toString('hex');
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sa-bench-'));
  cleanup.push(() => fs.rmSync(dataDir, { recursive: true, force: true }));
  const file = path.join(dataDir, 'archive.tar');
  const logger = createLogger('silent');
  const offload = createOffload();
  cleanup.push(() => offload.close());
  const contextOf = (deps: Deps, userId: string): Ctx => ({ deps, user: { id: userId, keyId: null }, log: logger });

  // The archive: the corpus in bulk in a first database, exported by the export service.
  const from = await freshDatabase('sa_bench_isrc');
  cleanup.push(() => from.drop());
  const fromDb = createDb(from.url);
  cleanup.push(() => fromDb.close());
  const fromConfig = loadConfig({ DATABASE_URL: from.url, JWT_SECRET: 'bench-secret-that-is-long-enough', LOG_LEVEL: 'silent' });
  const ada = await createUser(operatorCtx(fromDb), `ada-${tag}@example.test`, 'Ada');
  const projects = Array.from({ length: PROJECTS }, (_, i) => ({ id: `import-${i}`, ownerId: ada.id }));
  await insertCorpus(fromDb.pool, { projects });
  const words = vocabulary();
  let markdownBytes = 0;
  const t0 = performance.now();
  for (let start = 0; start < SESSIONS; start += 500) {
    const sessions = Array.from({ length: Math.min(500, SESSIONS - start) }, (_, i) => {
      const seed = start + i + 1;
      const s = generateSession(seed, words);
      const md = Buffer.from(s.markdown);
      markdownBytes += md.length;
      return {
        ...s,
        id: crypto.randomUUID(),
        projectId: projects[seed % PROJECTS].id,
        userId: ada.id,
        created: new Date(Date.UTC(2026, 0, 1) + seed * 1000),
        md,
      };
    });
    await insertCorpus(fromDb.pool, { sessions });
  }
  log(
    `import and search: ${SESSIONS} sessions (${(markdownBytes / MiB).toFixed(0)} MB of markdown) written to the first database in ${seconds(t0).toFixed(0)} s`,
  );
  const t1 = performance.now();
  const exported = await openExport(contextOf({ config: fromConfig, db: fromDb, logger, offload, search: undefined as never }, ada.id));
  try {
    await exported.writeTo(fs.createWriteStream(file));
  } finally {
    await exported.close();
  }
  log(`  export: ${(fs.statSync(file).size / MiB).toFixed(0)} MiB in ${seconds(t1).toFixed(0)} s`);

  // The second database, with a running service's search (its worker's defaults).
  const to = await freshDatabase('sa_bench_idst');
  cleanup.push(() => to.drop());
  const engine = new EmbeddedMeili({ dataDir, maxIndexingMemory: arg('load-memory') });
  const recentEngine = new EmbeddedMeili({ dataDir, name: 'meilisearch-recent' });
  cleanup.push(() => Promise.all([engine.stop(), recentEngine.stop()]));
  await Promise.all([engine.start(), recentEngine.start()]);
  const config = loadConfig({
    DATABASE_URL: to.url,
    DATA_DIR: dataDir,
    JWT_SECRET: 'bench-secret-that-is-long-enough',
    LOG_LEVEL: 'silent',
    NAMESPACE: to.name,
    MEILI_URL: engine.url!,
    MEILI_MASTER_KEY: engine.masterKey,
    MEILI_RECENT_URL: recentEngine.url!,
    MEILI_RECENT_MASTER_KEY: recentEngine.masterKey,
  });
  const db = createDb(config.databaseUrl);
  cleanup.push(() => db.close());
  const search = createSearch({ config, db, logger, offload });
  cleanup.push(() => search.stop());
  await search.start();
  const adaThere = await createUser(operatorCtx(db), ada.email, 'Ada');

  const t2 = performance.now();
  const summary = await importArchive(contextOf({ config, db, logger, offload, search }, adaThere.id), fs.createReadStream(file, { highWaterMark: MiB }), {
    onConflict: 'skip',
    maxBytes: 64 * 1024 * MiB,
    maxFileBytes: 50 * MiB,
  });
  const importS = seconds(t2);
  if (summary.errors.length) throw new Error(`import errors: ${JSON.stringify(summary.errors.slice(0, 3))}`);
  log(`  import: ${JSON.stringify(summary.sessions)} in ${importS.toFixed(0)} s (${Math.round(SESSIONS / importS)} sessions/s)`);
  const t3 = performance.now();
  let lastReport = t3;
  for (let backlog = await search.backlog(); backlog > 0; backlog = await search.backlog()) {
    if (performance.now() - lastReport > 30_000) {
      log(`  indexing… ${backlog} outbox rows to go`);
      lastReport = performance.now();
    }
    await sleep(200);
  }
  const searchableS = seconds(t3);
  const httpClient = createNodeHttpClient();
  try {
    const main = new Meilisearch({ host: engine.url!, apiKey: engine.masterKey, httpClient });
    const recent = new Meilisearch({ host: recentEngine.url!, apiKey: recentEngine.masterKey, httpClient });
    const { numberOfDocuments } = await main.index(search.indexUid).getStats();
    const inRecent = (await recent.index(recentUidOf(search.indexUid)).getStats()).numberOfDocuments;
    const { usedDatabaseSize } = await main.getStats();
    log(
      `  searchable: every session ${(searchableS / 60).toFixed(1)} min after the import ended ` +
        `(${Math.round(SESSIONS / (importS + searchableS))} sessions/s from its start); ` +
        `main index ${numberOfDocuments} documents, recent index ${inRecent}; ${(usedDatabaseSize / markdownBytes).toFixed(2)} engine bytes per markdown byte`,
    );
  } finally {
    httpClient.destroy();
  }
}

main()
  .catch((err) => {
    console.error(err);
    process.exitCode = 1;
  })
  .finally(async () => {
    for (const undo of cleanup.reverse()) await Promise.resolve(undo()).catch((err) => console.error('cleanup:', err));
    process.exit();
  });
