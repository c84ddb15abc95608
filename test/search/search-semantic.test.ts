/**
 * Semantic search (EMBEDDINGS_*) on the real engine and database, with a small deterministic
 * embeddings server started here (support/embeddings-server.ts): a query sharing no word with a
 * session but naming the same concepts lands next to it.
 *
 * With it configured, such a query finds the session; quoted and identifier-like queries stay
 * lexical (the server is not asked); an endpoint answering 500, or not answering, leaves search
 * working and lexical; related sessions come from the vector search and never cross tenants;
 * unset, nothing calls out.
 */
import crypto from 'node:crypto';
import { startTestApp, type TestApp, type TestUser } from '../support/app';
import { EmbeddingsServer } from '../support/embeddings-server';
import { eventually } from '../support/eventually';
import { createTestDatabase } from '../support/db';
import { Meilisearch } from 'meilisearch';
import type { EmbeddingStats } from '../../src/search/semantic/embedder';
import { indexUidOf, recentUidOf } from '../../src/search/engine/index-settings';

const DIMS = 64;

/** An app's engines (its embedded ones, main and recent, or the run's), as clients. */
const enginesOf = (a: TestApp): Meilisearch[] => {
  const { meiliUrls, meiliMasterKey } = a.deps.config;
  type Embedded = { url: string; masterKey: string } | null;
  const { embedded, recentEmbedded } = a.deps.search as unknown as { embedded: Embedded; recentEmbedded: Embedded };
  const engines = meiliUrls.length
    ? meiliUrls.map((host) => ({ host, apiKey: meiliMasterKey ?? undefined }))
    : [embedded!, ...(recentEmbedded ? [recentEmbedded] : [])].map((e) => ({ host: e.url, apiKey: e.masterKey }));
  return engines.map((e) => new Meilisearch(e));
};

/** An app's embedding counts (its search service's; null: no embedding endpoint configured). */
const embeddingStatus = (a: TestApp) => (a.deps.search as unknown as { embeddingStatus(): EmbeddingStats | null }).embeddingStatus();

const md = (title: string, text: string) => `# ${title}\n\n_**User**_\n\n${text}\n\n---\n\n`;
const S = {
  pool: { title: 'Postgres pool exhausted', text: 'The postgres pool is exhausted under load; postgres refuses clients.' },
  css: { title: 'Flexbox sidebar', text: 'The flexbox sidebar collapses on narrow screens; give the sidebar a minimum width.' },
  helm: { title: 'Helm chart ingress', text: 'The helm chart fails to render the ingress template; the values miss ingress hosts.' },
  evePool: { title: 'Postgres pool again', text: 'Our postgres pool is exhausted; postgres logs too many clients.' },
};

let server: EmbeddingsServer;
let app: TestApp;
let ada: TestUser;
let eve: TestUser;
const ids = { pool: crypto.randomUUID(), css: crypto.randomUUID(), helm: crypto.randomUUID(), evePool: crypto.randomUUID() };

const search = async (u: TestUser, query: string) => {
  const r = await app.gql(u, 'query($q: String!) { searchSessions(query: $q, limit: 10) { total results { projectId sessionId } } }', { q: query });
  expect(r.body.errors).toBeUndefined();
  return r.body.data.searchSessions as { total: number; results: Array<{ projectId: string; sessionId: string }> };
};
const sessionsOf = (page: { results: Array<{ sessionId: string }> }) => page.results.map((r) => r.sessionId);

beforeAll(async () => {
  server = new EmbeddingsServer(DIMS);
  const url = await server.start();
  app = await startTestApp({
    rateLimit: false,
    env: { EMBEDDINGS_URL: url, EMBEDDINGS_MODEL: 'test-embed', EMBEDDINGS_DIMENSIONS: String(DIMS), EMBEDDINGS_QUERY_TIMEOUT_MS: '300' },
  });
  [ada, eve] = await Promise.all([app.createUser('ada'), app.createUser('eve')]);
  for (const k of ['pool', 'css', 'helm'] as const) await app.upload(ada, 'sem-ada', ids[k], { name: S[k].title, markdown: md(S[k].title, S[k].text) });
  await app.upload(eve, 'sem-eve', ids.evePool, { name: S.evePool.title, markdown: md(S.evePool.title, S.evePool.text) });
  const status = () => embeddingStatus(app)!;
  await eventually('every document has its vector', () => status().documents >= 4 && status().pending === 0, 60_000);
}, 120_000);

afterAll(async () => {
  server?.setMode('fail');
  await app?.close();
  await server?.close();
});

afterEach(() => server.setMode('ok'));

test('a query sharing no word with a session, but its meaning, finds it first; never another user’s', async () => {
  // "sql reservoir depleted": no session holds these words; the embedding maps them to postgres, pool, exhausted.
  const before = server.requests;
  const page = await search(ada, 'sql reservoir depleted');
  expect(server.requests).toBe(before + 1);
  expect(sessionsOf(page)[0]).toBe(ids.pool);
  expect(sessionsOf(page)).not.toContain(ids.evePool);
  const eves = await search(eve, 'sql reservoir depleted');
  expect(sessionsOf(eves)[0]).toBe(ids.evePool);
  expect(sessionsOf(eves).filter((s) => s !== ids.evePool)).toEqual([]);
});

test('quoted phrases and identifier-like queries stay lexical: the endpoint is not asked', async () => {
  const before = server.requests;
  const phrase = await search(ada, '"postgres pool"');
  expect(sessionsOf(phrase)).toEqual([ids.pool]);
  // Found by their words as written, or not at all: no session comes back for its meaning.
  for (const q of ['retryWithBackoff', 'ECONNRESET', 'TS2345', 'max-depleted-count']) expect([q, (await search(ada, q)).results]).toEqual([q, []]);
  expect(sessionsOf(await search(ada, 'src/pool.ts'))).toEqual([ids.pool]);
  expect(server.requests).toBe(before);
});

test.each(['fail', 'stall'] as const)('an endpoint that %ss leaves search answering, lexically', async (mode) => {
  server.setMode(mode);
  const before = server.requests;
  // Lexical: the words are found as written…
  expect(sessionsOf(await search(ada, 'flexbox sidebar'))).toEqual([ids.css]);
  // …and a query of meaning alone finds nothing.
  const page = await search(ada, 'sql reservoir depleted');
  expect(page).toEqual({ total: 0, results: [] });
  expect(server.requests).toBeGreaterThan(before);
});

test('related sessions come from the vector search, within the caller’s scopes', async () => {
  const r = await app.request('GET', `/api/v1/projects/sem-ada/sessions/${ids.pool}/related?limit=5`, { token: ada.token });
  expect(r.status).toBe(200);
  const got = r.body.data.sessions.map((s: { sessionId: string }) => s.sessionId);
  // The vector search ranks every session of the caller's that has a vector (lexically, the pool
  // session shares no distinctive word with the others): ada's two others, not eve's pool session.
  expect([...got].sort()).toEqual([ids.css, ids.helm].sort());
  const e = await app.request('GET', `/api/v1/projects/sem-eve/sessions/${ids.evePool}/related?limit=5`, { token: eve.token });
  expect(e.status).toBe(200);
  expect(e.body.data.sessions).toEqual([]);
  // Another user's session answers as every read of it does.
  expect((await app.request('GET', `/api/v1/projects/sem-ada/sessions/${ids.pool}/related`, { token: eve.token })).status).toBe(403);
});

test('/metrics shows the embedding requests and the lexical fallbacks', async () => {
  const r = await app.request('GET', '/metrics');
  expect(r.status).toBe(200);
  expect(r.text).toMatch(/search_embedding_requests_total\{kind="documents",outcome="ok"\} [1-9]/);
  expect(r.text).toMatch(/search_embedding_requests_total\{kind="query",outcome="failed"\} [1-9]/);
  expect(r.text).toMatch(/search_semantic_fallbacks_total [1-9]/);
  expect(r.text).toMatch(/search_embedding_pending 0/);
});

test('a large session is embedded by its words, without the separators that keep them apart for the engine', async () => {
  const lea = await app.createUser('lea');
  // Over 64 KB: indexed as a word list (and fragments), not whole.
  const vocabulary = Array.from({ length: 9_000 }, (_, i) => `lexeme${i.toString(36)}`).join(' ');
  await app.upload(lea, 'sem-lea', crypto.randomUUID(), { name: 'Vast glossary', markdown: md('Vast glossary', vocabulary) });
  const status = () => embeddingStatus(app)!;
  const embedded = () => server.inputs.find((t) => t.startsWith('Vast glossary\n') && !t.includes('_**User**_'));
  await eventually('the word list to be embedded', () => embedded() !== undefined && status().pending === 0, 60_000);
  const text = embedded()!;
  expect(text).toContain('lexeme0 lexeme1 lexeme2');
  expect(text).not.toContain(';');
});

test('two instances on one database: each document is sent to the endpoint once, by the instance holding the sweep', async () => {
  const second = await startTestApp({
    db: app.db,
    rateLimit: false,
    env: { EMBEDDINGS_URL: server.url, EMBEDDINGS_MODEL: 'test-embed', EMBEDDINGS_DIMENSIONS: String(DIMS), EMBEDDINGS_QUERY_TIMEOUT_MS: '300' },
  });
  // A slow endpoint: a pass outlasts the other instance's next look at what waits.
  server.delayMs = 1500;
  try {
    const kim = await app.createUser('kim');
    const titles = Array.from({ length: 4 }, (_, i) => `Twice sent ${i} ${crypto.randomUUID()}`);
    for (const t of titles) await second.upload(kim, 'sem-kim', crypto.randomUUID(), { name: t, markdown: md(t, 'One text, embedded once.') });
    const sent = (t: string) => server.inputs.filter((x) => x.startsWith(`${t}\n`)).length;
    // Documents waiting for a vector, in any index of any engine: once none is, nothing is sent again.
    const uid = indexUidOf(app.db.name, DIMS);
    const waiting = async () => {
      let n = 0;
      for (const e of enginesOf(app))
        for (const index of [uid, recentUidOf(uid)]) {
          const filter = `userId = "${kim.id}" AND (vectorHash IS NULL OR vectorHash NOT EXISTS)`;
          // (An engine holds the main index, the recent one, or both.)
          n += (
            await e
              .index(index)
              .getDocuments({ filter, limit: 1 })
              .catch(() => ({ total: 0 }))
          ).total;
        }
      return n;
    };
    await eventually('every new document has its vector', async () => titles.every((t) => sent(t) > 0) && (await waiting()) === 0, 60_000);
    expect(titles.map(sent)).toEqual(titles.map(() => 1));
  } finally {
    server.delayMs = 0;
    await second.close();
  }
}, 120_000);

test('a compaction moves a document into the main index with its vector: the endpoint is not asked again', async () => {
  const leo = await app.createUser('leo');
  const title = `Moved once ${crypto.randomUUID()}`;
  await app.upload(leo, 'sem-leo', crypto.randomUUID(), { name: title, markdown: md(title, 'A text moved into the main index.') });
  const uid = indexUidOf(app.db.name, DIMS);
  // Every document of leo's in `index` (on whichever engine holds it) has the vector of its own version.
  const vectorsIn = async (index: string) => {
    for (const e of enginesOf(app)) {
      const page = await e
        .index(index)
        .getDocuments<{ hash: string; vectorHash?: string | null }>({ filter: `userId = "${leo.id}"`, fields: ['hash', 'vectorHash'], limit: 100 })
        .catch(() => ({ results: [] }));
      if (page.results.length > 0) return page.results.every((d) => d.vectorHash === d.hash);
    }
    return false;
  };
  const sent = () => server.inputs.filter((x) => x.startsWith(`${title}\n`)).length;
  await eventually('its vector in the recent index', () => vectorsIn(recentUidOf(uid)), 60_000);
  expect(sent()).toBe(1);
  // The main index's copy is another document version (the recent index's flags are not in it).
  await (app.deps.search as unknown as { compact(settledMs?: number): Promise<number> }).compact();
  await eventually('its vector in the main index', () => vectorsIn(uid), 60_000);
  expect(sent()).toBe(1);
});

test('unset (the default): nothing calls out, and search is lexical', async () => {
  const plain = await startTestApp({ rateLimit: false });
  try {
    const before = server.requests;
    const u = await plain.createUser('uma');
    const id = crypto.randomUUID();
    await plain.upload(u, 'sem-uma', id, { name: S.pool.title, markdown: md(S.pool.title, S.pool.text) });
    const found = async (q: string) =>
      (
        (await plain.gql(u, 'query($q: String!) { searchSessions(query: $q) { results { sessionId } } }', { q })).body.data.searchSessions.results as Array<{
          sessionId: string;
        }>
      ).map((x) => x.sessionId);
    await eventually('the session is indexed', async () => (await found('postgres pool')).includes(id));
    expect(await found('sql reservoir depleted')).toEqual([]);
    expect(server.requests).toBe(before);
    expect(embeddingStatus(plain)).toBeNull();
  } finally {
    await plain.close();
  }
});

test('turned on over an existing index: the index with the embedder is built from the database, and the one without it goes', async () => {
  const db = await createTestDatabase();
  // Every engine's indexes of this database's namespace (the embedded engine, or the run's engines).
  const indexesOf = async (a: TestApp) => {
    const uids: string[] = [];
    for (const e of enginesOf(a)) uids.push(...(await e.getIndexes({ limit: 1000 })).results.map((i) => i.uid));
    return [...new Set(uids.filter((uid) => uid.startsWith(`${db.name}_`)).map((uid) => uid.replace(/_recent$/, '')))];
  };
  const id = crypto.randomUUID();
  let u: TestUser;
  const plain = await startTestApp({ rateLimit: false, db });
  try {
    u = await plain.createUser('ivy');
    await plain.upload(u, 'sem-ivy', id, { name: S.pool.title, markdown: md(S.pool.title, S.pool.text) });
    expect(await indexesOf(plain)).toEqual([indexUidOf(db.name)]);
  } finally {
    await plain.close();
  }
  const on = await startTestApp({
    rateLimit: false,
    db,
    env: { EMBEDDINGS_URL: server.url, EMBEDDINGS_MODEL: 'test-embed', EMBEDDINGS_DIMENSIONS: String(DIMS) },
  });
  try {
    const found = async () =>
      (
        (await on.gql(u, 'query($q: String!) { searchSessions(query: $q) { results { sessionId } } }', { q: 'sql reservoir depleted' })).body.data
          .searchSessions.results as Array<{ sessionId: string }>
      ).map((x) => x.sessionId);
    await eventually('the session is rebuilt into the new index and embedded', async () => (await found()).includes(id), 60_000);
    expect(await indexesOf(on)).toEqual([indexUidOf(db.name, DIMS)]);
  } finally {
    await on.close();
    await db.drop();
  }
}, 120_000);
