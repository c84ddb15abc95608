/**
 * Search as you type (docs/search.md): what the console's search page costs per keystroke.
 *
 *   npx tsx bench/search-typing.ts                    # 10k sessions
 *   npx tsx bench/search-typing.ts --sizes=10000,100000 --queries=100
 *   npx tsx bench/search-typing.ts --browser=40     # also 40 searches typed in Chromium, timed to the rendered list
 *   npx tsx bench/search-typing.ts --sizes=10000,100000 --load-memory=2GiB   # load 100k faster
 *   npx tsx bench/search-typing.ts --load=worker    # index through the service's own worker (slow)
 *
 * The real service (express + Apollo + MariaDB + both Meilisearch engines, search worker on) on a
 * fresh database, listening on a loopback port. The corpus of bench/search.ts (bench/corpus.ts:
 * realistic transcripts, median ~3 KB, 10 users × 10 projects) is written in bulk. It is then
 * indexed (--load=direct, the default) by building each session's documents with the worker's own
 * builder (src/domain/search-documents.ts toDocuments, from the row as the worker reads it, synced at
 * database time) and pushing them to the main index in large batches, as a rebuild or compaction
 * would put them there, only without the outbox round trips (the worker indexes 17–35 sessions/s
 * on a shared machine); or (--load=worker) through the outbox and the service's worker.
 * --load-memory=SIZE runs the engines with that indexing memory instead of the service's 64 MiB
 * (loading is much faster; searching does not use it). Then, per query (two words taken from the corpus), every prefix a user
 * types from 2 characters on is sent as the console sends it: the page's own `SearchSessions`
 * document (web/src/gql, snippets, matching exchanges with their exchange numbers, project names),
 * POST /api/v1/graphql over a keep-alive node:http connection, as that user. The time is request
 * sent → whole response parsed (what the page then renders is a list of at most 20 results; the
 * browser tests check it renders). Each keystroke waits for the previous answer, which is what a
 * typist slower than the 150 ms debounce gets; a faster one sends fewer requests.
 *
 * --browser=N: then, in Debian's Chromium (test/support/chromium.ts), the console's /search page
 * signed in as the first user: N whole queries put in the box at once; timed inside the page from
 * the GraphQL request's start (Resource Timing) to the DOM mutation that shows the results list
 * (a MutationObserver: before paint), and from the input to that mutation (debounce included).
 * No assertion: figures go to docs/benchmarks.md.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { Meilisearch } from 'meilisearch';
import type { Search } from '../src/search';
import { toDocuments, type IndexableSession, type SessionDocument } from '../src/domain/search-documents';
import { EmbeddedMeili } from '../src/search/embedded/embedded';
import { createNodeHttpClient } from '../src/search/engine/http-client';
import { createApiKey } from '../src/services/keys';
import { operatorCtx } from '../src/services/context';
import { createUser } from '../src/services/users';
import { tuneHeap } from '../src/http/fast/heap';
import { launchBrowser, newRecordedPage } from '../test/support/chromium';
import { startTestApp, type TestApp } from '../test/support/app';
import { SearchSessionsDocument } from '../web/src/gql/graphql';
import { generateSession, insertCorpus, rng, vocabulary } from './corpus';
import { percentile, request } from './support';

const arg = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
const sizes = (arg('sizes') ?? '10000').split(',').map(Number);
const QUERIES = Number(arg('queries') ?? 100);
const BROWSER_QUERIES = Number(arg('browser') ?? 0);
const LOAD = arg('load') ?? 'direct';
if (LOAD !== 'direct' && LOAD !== 'worker') throw new Error('--load=direct|worker');
const LOAD_MEMORY = arg('load-memory');
/** Direct load: documents pushed to the engine per request (bytes of content, roughly). */
const PUSH_BYTES = 48 * 1024 * 1024;
const PASSWORD = 'bench password, long enough';
const USERS = 10;
const PROJECTS_PER_USER = 10;
const log = (s: string) => process.stdout.write(`${s}\n`);
const now = () => performance.now();
const fmt = (ms: number) => (ms < 10 ? ms.toFixed(2) : ms.toFixed(1));

const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

async function post(app: TestApp, token: string, body: string): Promise<{ status: number; json: any }> {
  const r = await request(new URL('/api/v1/graphql', app.url), { method: 'POST', token, body, headers: { Accept: 'application/json' }, agent });
  return { status: r.status, json: JSON.parse(r.text) };
}

async function main() {
  // The service's heap settings, as src/main.ts applies them (src/http/fast/heap.ts).
  tuneHeap();
  // Engines and their data in a directory of this run, removed at the end (also on Ctrl-C).
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sa-typing-'));
  // --load-memory: engines of our own, as the service would run them, with a bigger indexing memory.
  const engines = LOAD_MEMORY
    ? [
        new EmbeddedMeili({ dataDir, maxIndexingMemory: LOAD_MEMORY }),
        new EmbeddedMeili({ dataDir, name: 'meilisearch-recent', maxIndexingMemory: LOAD_MEMORY }),
      ]
    : [];
  await Promise.all(engines.map((e) => e.start()));
  const engineEnv: Record<string, string> = engines.length
    ? { MEILI_URL: engines[0].url!, MEILI_MASTER_KEY: engines[0].masterKey, MEILI_RECENT_URL: engines[1].url!, MEILI_RECENT_MASTER_KEY: engines[1].masterKey }
    : {};
  const app = await startTestApp({
    env: { DATA_DIR: dataDir, RATE_LIMIT_GRAPHQL_PER_HOUR: '100000000', RATE_LIMIT_REST_PER_HOUR: '100000000', ...engineEnv },
    rateLimit: false,
  });
  let closing: Promise<void> | null = null;
  const close = () =>
    (closing ??= app
      .close()
      .then(async () => {
        for (const e of engines) await e.stop();
      })
      .finally(() => fs.rmSync(dataDir, { recursive: true, force: true })));
  for (const sig of ['SIGINT', 'SIGTERM'] as const) {
    process.once(sig, () => {
      log(`\n${sig}: dropping the database and the engines' data…`);
      void close().finally(() => process.exit(130));
    });
  }
  const pool = app.deps.db.pool;
  // createDeps builds the full search (worker included); TestApp types it as the services see it.
  const search = app.deps.search as unknown as Search;
  const engine = engines[0] ?? search.embedded;
  if (LOAD === 'direct' && !engine) throw new Error('--load=direct needs the embedded engine (MEILI_URL unset)');
  const admin = engine ? new Meilisearch({ host: engine.url!, apiKey: engine.masterKey, httpClient: createNodeHttpClient({ timeoutMs: 600_000 }) }) : null;
  const mainIndex = admin?.index<SessionDocument>(search.indexUid) ?? null;
  /** Direct load: documents waiting to be pushed, and the engine tasks not yet known to have succeeded. */
  let pending: SessionDocument[] = [];
  let pendingBytes = 0;
  const tasks: number[] = [];
  const waitTasks = async (keep: number) => {
    while (tasks.length > keep) {
      const task = await admin!.tasks.waitForTask(tasks.shift()!, { timeout: 3_600_000, interval: 500 });
      if (task.status !== 'succeeded') throw new Error(`indexing task ${task.uid} ${task.status}: ${task.error?.message}`);
    }
  };
  const push = async () => {
    if (!pending.length) return;
    tasks.push((await mainIndex!.addDocuments(pending)).taskUid);
    pending = [];
    pendingBytes = 0;
    // The engine keeps queued payloads on disk and merges consecutive additions into one batch
    // (fewer, larger batches index faster); at most 16 are left queued.
    await waitTasks(16);
  };
  try {
    // The first user can sign in to the console (--browser); the others only have keys.
    const first = await createUser(operatorCtx(app.deps.db), 'typing0@example.test', 'Typist', { password: PASSWORD, role: 'member' });
    const users = [
      { id: first.id, email: first.email },
      ...Array.from({ length: USERS - 1 }, (_, i) => ({ id: crypto.randomUUID(), email: `typing${i + 1}@example.test` })),
    ];
    // The first user exists already (made through the service above).
    await insertCorpus(pool, { users: users.slice(1) });
    const tokens = await Promise.all(
      users.map(async (u) => (await createApiKey(operatorCtx(app.deps.db, { jwtSecret: app.deps.config.jwtSecret }), { name: 'bench' }, u.id)).token),
    );
    const projects = users.flatMap((u) => Array.from({ length: PROJECTS_PER_USER }, (_, j) => ({ id: `p-${u.id.slice(0, 8)}-${j}`, ownerId: u.id })));
    await insertCorpus(pool, { projects });
    const words = vocabulary();
    const r = rng(2024);
    const queryPool: Array<{ q: string; user: number }> = [];
    let loaded = 0;
    log(`search-as-you-type benchmark: sizes ${sizes.join(', ')}; ${USERS} users; ${QUERIES} typed queries per size`);

    for (const size of sizes) {
      const t0 = now();
      for (let start = loaded; start < size; start += 500) {
        const batch = Array.from({ length: Math.min(500, size - start) }, (_, i) => {
          const seed = start + i + 1;
          const s = generateSession(seed, words);
          const pi = seed % projects.length;
          const project = projects[pi];
          const created = new Date(Date.now() - Math.floor(r() * 90 * 86400_000));
          if (queryPool.length < 2000 && r() < 0.05) {
            const sentence = s.markdown.split(/[.\n]/).filter((x) => x.split(' ').length > 6)[0];
            const ws = sentence?.toLowerCase().match(/[a-z]{4,}/g);
            if (ws && ws.length >= 3) queryPool.push({ q: `${ws[1]} ${ws[2]}`, user: Math.floor(pi / PROJECTS_PER_USER) });
          }
          return { ...s, id: crypto.randomUUID(), projectId: project.id, userId: project.ownerId, created, md: Buffer.from(s.markdown) };
        });
        await insertCorpus(pool, { sessions: batch, outbox: LOAD === 'worker' ? 'compact' : undefined });
        if (LOAD === 'worker') {
          search.notify();
          continue;
        }
        // The rows as the worker reads them (worker.ts), their documents as it builds them.
        const rows: IndexableSession[] = await pool.query(
          `SELECT projectId, id, userId, name, createdAt, clientName, agentName, deviceId, metadataJson, hasGitBranches, contentDigest
             FROM sessions WHERE ${batch.map(() => '(projectId = ? AND id = ?)').join(' OR ')}`,
          batch.flatMap((s) => [s.projectId, s.id]),
        );
        const markdownOf = new Map(batch.map((s) => [`${s.projectId}/${s.id}`, s.markdown]));
        const [{ now: dbNow }] = await pool.query('SELECT NOW(3) AS now');
        for (const row of rows) {
          for (const doc of toDocuments(row, markdownOf.get(`${row.projectId}/${row.id}`)!, (dbNow as Date).getTime())) {
            pending.push(doc);
            pendingBytes += doc.content.length + 512;
          }
        }
        if (pendingBytes >= PUSH_BYTES) {
          await push();
          log(`  ${start + batch.length} sessions written, ${tasks.length} engine batches queued (${((now() - t0) / 1000).toFixed(0)} s)`);
        }
      }
      if (LOAD === 'direct') {
        await push();
        await waitTasks(0);
      }
      const tInserted = now();
      let last = now();
      for (;;) {
        const backlog = await search.backlog();
        if (backlog === 0) break;
        if (now() - last > 15_000) {
          log(`  indexing… ${backlog} sessions to go`);
          last = now();
        }
        await new Promise((res) => setTimeout(res, 250));
      }
      const tIndexed = now();
      log(
        LOAD === 'direct'
          ? `\n== ${size} sessions: written and indexed directly in ${((tIndexed - t0) / 1000).toFixed(1)} s (${Math.round((size - loaded) / ((tIndexed - t0) / 1000))} sessions/s), load ${os
              .loadavg()
              .map((x) => x.toFixed(1))
              .join(' ')}`
          : `\n== ${size} sessions: written in ${((tInserted - t0) / 1000).toFixed(1)} s, indexed in ${((tIndexed - tInserted) / 1000).toFixed(1)} s`,
      );
      loaded = size;

      const query = SearchSessionsDocument.toString();
      const typed = Array.from({ length: QUERIES }, (_, i) => queryPool[(i * 7) % queryPool.length]);
      const send = (user: number, q: string) => post(app, tokens[user], JSON.stringify({ query, variables: { query: q, filters: {}, limit: 20, offset: 0 } }));
      // Warm-up: each full query once.
      for (const t of typed) await send(t.user, t.q);
      const loadBefore = os.loadavg()[0];
      const all: number[] = [];
      const finals: number[] = [];
      let requests = 0;
      let withResults = 0;
      let exchangesLinked = 0;
      let exchangesTotal = 0;
      for (const t of typed) {
        for (let n = 2; n <= t.q.length; n++) {
          const prefix = t.q.slice(0, n);
          if (!prefix.trim() || prefix.endsWith(' ')) continue; // the box waits for the next letter
          const t1 = now();
          const res = await send(t.user, prefix);
          const ms = now() - t1;
          if (res.status !== 200 || res.json.errors) throw new Error(`search failed: ${res.status} ${JSON.stringify(res.json.errors ?? res.json)}`);
          requests++;
          all.push(ms);
          if (n === t.q.length) {
            finals.push(ms);
            const results = res.json.data.searchSessions.results as Array<{ matchingExchanges: Array<{ exchange: number | null }> }>;
            if (results.length) withResults++;
            for (const x of results) {
              for (const m of x.matchingExchanges) {
                exchangesTotal++;
                if (m.exchange) exchangesLinked++;
              }
            }
          }
        }
      }
      log(
        `  every keystroke (${requests} requests)          p50 ${fmt(percentile(all, 50)).padStart(6)} ms   p95 ${fmt(percentile(all, 95)).padStart(6)} ms   max ${fmt(Math.max(...all))} ms`,
      );
      log(
        `  the whole query (${finals.length} requests)            p50 ${fmt(percentile(finals, 50)).padStart(6)} ms   p95 ${fmt(percentile(finals, 95)).padStart(6)} ms`,
      );
      log(`  load average (1 min) ${loadBefore.toFixed(1)} before, ${os.loadavg()[0].toFixed(1)} after the timed keystrokes (2 cores)`);
      log(`  ${withResults}/${finals.length} whole queries had results; ${exchangesLinked}/${exchangesTotal} matching exchanges carry an exchange number`);
      if (BROWSER_QUERIES > 0)
        await inBrowser(
          app,
          queryPool
            .filter((x) => x.user === 0)
            .map((x) => x.q)
            .slice(0, BROWSER_QUERIES),
        );
    }
  } finally {
    agent.destroy();
    await close();
  }
}

/** The console's search page in Chromium: request start → results in the DOM, and input → results. */
async function inBrowser(app: TestApp, queries: string[]) {
  const browser = await launchBrowser();
  try {
    const { page, context } = await newRecordedPage(browser, app.url);
    await page.goto('/sign-in?next=/search');
    await page.getByLabel('Email').fill('typing0@example.test');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    const box = page.getByRole('searchbox', { name: 'Search sessions' });
    await box.waitFor();
    await page.evaluate(() => {
      const w = globalThis as any;
      w.__rendered = [] as number[];
      new w.MutationObserver(() => {
        if (w.document.getElementById('search-results')) w.__rendered.push(w.performance.now());
      }).observe(w.document.querySelector('main'), { childList: true, subtree: true, characterData: true });
    });
    const status = page.getByRole('status').first();
    const toRender: number[] = [];
    const fromInput: number[] = [];
    for (const q of [...queries, ...queries]) {
      await box.fill('');
      await page.getByText('Type to search your sessions.').waitFor();
      const t0: number = await page.evaluate(() => (globalThis as any).performance.now());
      await box.fill(q);
      await page.getByRole('status').filter({ hasText: /match/ }).waitFor();
      await status.waitFor();
      const m = await page.evaluate((since: number) => {
        const w = globalThis as any;
        const req = (w.performance.getEntriesByType('resource') as any[]).filter((e) => e.name.endsWith('/api/v1/graphql') && e.startTime > since).pop();
        const rendered = (w.__rendered as number[]).find((t) => req && t >= req.responseEnd);
        return req && rendered ? { request: rendered - req.startTime, input: rendered - since } : null;
      }, t0);
      if (m) {
        toRender.push(m.request);
        fromInput.push(m.input);
      }
    }
    // The first pass warms the engine and the page: keep the second.
    const half = (xs: number[]) => xs.slice(Math.floor(xs.length / 2));
    const a = half(toRender);
    const b = half(fromInput);
    log(
      `  Chromium, request start → results in the DOM (${a.length})  p50 ${fmt(percentile(a, 50)).padStart(6)} ms   p95 ${fmt(percentile(a, 95)).padStart(6)} ms`,
    );
    log(
      `  Chromium, input → results in the DOM (150 ms debounce incl.)  p50 ${fmt(percentile(b, 50)).padStart(6)} ms   p95 ${fmt(percentile(b, 95)).padStart(6)} ms`,
    );
    await context.close();
  } finally {
    await browser.close();
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
