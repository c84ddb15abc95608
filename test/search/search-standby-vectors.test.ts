/**
 * Semantic search with a standby (MEILI_STANDBY_URLS), on real Meilisearch processes started here
 * (support/meili-engines.ts) and a small deterministic embeddings server (support/embeddings-server.ts),
 * all stopped at the end, also on failure: the standby's documents get the vectors their primary
 * holds, without the endpoint being asked again, so that with the primary killed a query of
 * meaning alone still finds its session on the standby.
 */
import crypto from 'node:crypto';
import { Meilisearch } from 'meilisearch';
import { EMBEDDER } from '../../src/domain/search-documents';
import { createNodeHttpClient } from '../../src/search/engine/http-client';
import { indexUidOf, recentUidOf } from '../../src/search/engine/index-settings';
import { vectorOf } from '../../src/search/semantic/embedder';
import { startTestApp, type TestApp, type TestUser } from '../support/app';
import { EmbeddingsServer } from '../support/embeddings-server';
import { eventually } from '../support/eventually';
import { TestEngines } from '../support/meili-engines';

jest.setTimeout(180_000);

const DIMS = 64;
const md = (title: string, text: string) => `# ${title}\n\n_**User**_\n\n${text}\n\n---\n\n`;
const S = {
  pool: { title: 'Postgres pool exhausted', text: 'The postgres pool is exhausted under load; postgres refuses clients.' },
  css: { title: 'Flexbox sidebar', text: 'The flexbox sidebar collapses on narrow screens; give the sidebar a minimum width.' },
  helm: { title: 'Helm chart ingress', text: 'The helm chart fails to render the ingress template; the values miss ingress hosts.' },
};
const ids = { pool: crypto.randomUUID(), css: crypto.randomUUID(), helm: crypto.randomUUID() };

let set: TestEngines;
let server: EmbeddingsServer;
let app: TestApp;
let ada: TestUser;

/** Every document of both indexes on the engine at `url`: id → its hash, the hash its vector was made for, and the vector. */
async function vectorsOn(url: string): Promise<Map<string, { hash: string; vectorHash: string | null; vector: number[] | null }>> {
  const httpClient = createNodeHttpClient();
  try {
    const client = new Meilisearch({ host: url, apiKey: set.key, httpClient });
    const uid = indexUidOf(app.db.name, DIMS);
    const docs = new Map<string, { hash: string; vectorHash: string | null; vector: number[] | null }>();
    for (const index of [uid, recentUidOf(uid)]) {
      const page = await client
        .index(index)
        .getDocuments<{ id: string; hash: string; vectorHash?: string | null; _vectors?: Record<string, unknown> }>({
          fields: ['id', 'hash', 'vectorHash'],
          limit: 1000,
          retrieveVectors: true,
        })
        .catch(() => ({ results: [] }));
      for (const d of page.results) docs.set(d.id, { hash: d.hash, vectorHash: d.vectorHash ?? null, vector: vectorOf(d._vectors?.[EMBEDDER]) });
    }
    return docs;
  } finally {
    httpClient.destroy();
  }
}

beforeAll(async () => {
  set = await TestEngines.start(2);
  server = new EmbeddingsServer(DIMS);
  const url = await server.start();
  const [primary, standby] = set.urls();
  app = await startTestApp({
    rateLimit: false,
    env: {
      MEILI_URL: '',
      MEILI_URLS: primary,
      MEILI_STANDBY_URLS: standby,
      MEILI_MASTER_KEY: set.key,
      EMBEDDINGS_URL: url,
      EMBEDDINGS_MODEL: 'test-embed',
      EMBEDDINGS_DIMENSIONS: String(DIMS),
      EMBEDDINGS_QUERY_TIMEOUT_MS: '300',
    },
  });
  ada = await app.createUser('ada');
  for (const k of ['pool', 'css', 'helm'] as const) await app.upload(ada, 'standby-sem', ids[k], { name: S[k].title, markdown: md(S[k].title, S[k].text) });
});

afterAll(async () => {
  server?.setMode('fail');
  await app?.close();
  await server?.close();
  await set?.stop();
});

test('a standby gets its primary’s vectors without the endpoint asked again; a killed primary leaves semantic search working', async () => {
  const [primaryUrl, standbyUrl] = set.urls();
  const withVectors = (docs: Awaited<ReturnType<typeof vectorsOn>>) =>
    docs.size >= 3 && [...docs.values()].every((d) => d.vector !== null && d.vectorHash === d.hash);
  await eventually('the primary’s documents to have their vectors', async () => withVectors(await vectorsOn(primaryUrl)), 60_000);
  const asked = server.inputs.length;
  expect(asked).toBeGreaterThanOrEqual(3);
  // Every document on the standby with the vector the primary holds, made for the same hash.
  await eventually(
    'the standby to hold the primary’s vectors',
    async () => {
      const [p, s] = await Promise.all([vectorsOn(primaryUrl), vectorsOn(standbyUrl)]);
      return (
        withVectors(p) &&
        s.size === p.size &&
        [...p].every(([id, d]) => s.get(id)?.vectorHash === d.hash && JSON.stringify(s.get(id)?.vector) === JSON.stringify(d.vector))
      );
    },
    60_000,
  );
  // The standby's came from the primary: the endpoint was not asked again.
  expect(server.inputs.length).toBe(asked);
  // Nothing waits on the standby any more, as /metrics says.
  await eventually('/metrics to show no standby document waiting', async () => (await standbyPending()) === 0, 30_000);

  set.kill(0);
  try {
    // "sql reservoir drained": no session holds these words; the embedding maps them to postgres,
    // pool, exhausted. The search fails over to the standby at once (search-engines.test.ts).
    const found = await ask();
    expect(found[0]).toBe(ids.pool);
  } finally {
    await set.revive(0);
  }
});

/** `search_standby_embedding_pending` on /metrics. */
async function standbyPending(): Promise<number> {
  const r = await app.request('GET', '/metrics');
  expect(r.status).toBe(200);
  return Number(/^search_standby_embedding_pending (-?\d+)$/m.exec(r.text)?.[1]);
}

/** Ada's search for a query of meaning alone: the sessions found, in order. */
async function ask(): Promise<string[]> {
  const r = await app.gql(ada, 'query($q: String!) { searchSessions(query: $q, limit: 10) { results { sessionId } } }', { q: 'sql reservoir drained' });
  expect(r.body.errors).toBeUndefined();
  return (r.body.data.searchSessions.results as Array<{ sessionId: string }>).map((x) => x.sessionId);
}

test('standby documents whose vector the primary holds for another version do not hold back those behind them', async () => {
  const [primaryUrl, standbyUrl] = set.urls();
  const uid = indexUidOf(app.db.name, DIMS);
  const httpClient = createNodeHttpClient();
  try {
    const at = (url: string) => new Meilisearch({ host: url, apiKey: set.key, httpClient }).index(uid);
    // A full page of waiting documents (more than one pass reads) whose primary copies were made
    // for another version, then one the primary holds in the same version. An owner no one is,
    // so that no search sees them.
    const blocked = Array.from({ length: 450 }, (_, i) => ({ id: `blocked-${i}`, hash: 'v1', userId: 'nobody', sessionDigest: `d-blocked-${i}` }));
    const behind = { id: 'behind', hash: 'v1', userId: 'nobody', sessionDigest: 'd-behind' };
    const vector = Array.from({ length: DIMS }, (_, i) => (i === 0 ? 1 : 0));
    const onPrimary = [
      ...blocked.map((d) => ({ ...d, hash: 'v2', vectorHash: 'v2', _vectors: { [EMBEDDER]: null } })),
      { ...behind, vectorHash: 'v1', _vectors: { [EMBEDDER]: vector } },
    ];
    const onStandby = [...blocked, behind].map((d) => ({ ...d, vectorHash: null, _vectors: { [EMBEDDER]: null } }));
    for (const [url, docs] of [
      [primaryUrl, onPrimary],
      [standbyUrl, onStandby],
    ] as const) {
      const task = await at(url).addDocuments(docs).waitTask({ timeout: 60_000 });
      expect(task.status).toBe('succeeded');
    }
    await eventually(
      'the document behind the blocked ones to get its vector on the standby',
      async () => {
        const d = (await vectorsOn(standbyUrl)).get('behind');
        return d?.vectorHash === 'v1' && JSON.stringify(d.vector) === JSON.stringify(vector);
      },
      60_000,
    );
    // The blocked ones still wait: the primary holds their vectors for another version.
    const waiting = await at(standbyUrl).getDocuments({ filter: 'vectorHash IS NULL', limit: 1 });
    expect(waiting.total).toBe(blocked.length);
    await eventually('/metrics to count the blocked ones', async () => (await standbyPending()) === blocked.length, 30_000);
  } finally {
    httpClient.destroy();
  }
});
