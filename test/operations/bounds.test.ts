/**
 * Bounded work per request. Each test reproduces a finding of the review first
 * (a 400 KB search query, 300,000 filter values, a GraphQL body over its own limit, automatic
 * persisted queries, an open /metrics) against a real app, MariaDB and Meilisearch.
 */
import crypto from 'node:crypto';
import { startTestApp, type TestApp, type TestUser } from '../support/app';

let app: TestApp;
let a: TestUser;

const GRAPHQL_LIMIT = 4 * 1024 * 1024;
const METRICS_TOKEN = 'metrics-token-for-the-bounds-test';

const SEARCH = 'query($q: String!, $f: SessionFilters) { searchSessions(query: $q, filters: $f) { total results { sessionId snippet } } }';

beforeAll(async () => {
  app = await startTestApp({
    env: {
      MAX_GRAPHQL_BODY_BYTES: String(GRAPHQL_LIMIT),
      METRICS_TOKEN,
      RATE_LIMIT_GRAPHQL_PER_HOUR: '100000',
      RATE_LIMIT_REST_PER_HOUR: '100000',
    },
  });
  a = await app.createUser('bounds');
}, 60_000);

afterAll(async () => {
  await app?.close();
});

describe('search query size', () => {
  test('a 400 KB query is a VALIDATION_ERROR, answered at once, and /healthz stays responsive', async () => {
    const words = Array.from({ length: 40_000 }, (_, i) => `w${i.toString(36)}x`).join(' ');
    const q = words.slice(0, 400 * 1024);
    const [r, health] = await Promise.all([app.gql(a.token, SEARCH, { q }), app.request('GET', '/healthz')]);
    expect(r.status).toBe(200);
    expect(r.body.errors[0].extensions.code).toBe('VALIDATION_ERROR');
    expect(r.body.errors[0].message).toMatch(/at most 512 characters/);
    expect(health.status).toBe(200);
  });

  test('more than 32 different words is a VALIDATION_ERROR; repeated words count once', async () => {
    const distinct = Array.from({ length: 33 }, (_, i) => `t${i}`).join(' ');
    const r = await app.gql(a.token, SEARCH, { q: distinct });
    expect(r.body.errors[0].extensions.code).toBe('VALIDATION_ERROR');
    expect(r.body.errors[0].message).toMatch(/at most 32 different words/);

    const repeated = Array.from({ length: 100 }, (_, i) => `t${i % 32}`).join(' ');
    expect(repeated.length).toBeLessThanOrEqual(512);
    const ok = await app.gql(a.token, SEARCH, { q: repeated });
    expect(ok.body.errors).toBeUndefined();
    expect(ok.body.data.searchSessions.total).toBe(0);
  });

  test('a 512-character query of 32 words over a page of matching sessions is answered and marked', async () => {
    // Every hit's text holds every query word: the highlighter's work is query × page, no more.
    const words = Array.from({ length: 32 }, (_, i) => `zq${i.toString(36)}${'k'.repeat(12)}`);
    const q = words.join(' ');
    expect(q.length).toBeLessThanOrEqual(512);
    for (let i = 0; i < 5; i++) {
      const r = await app.request('PUT', `/api/v1/projects/hl/sessions/${crypto.randomUUID()}`, {
        token: a.token,
        body: { name: `hl ${i}`, markdown: `# hit ${i}\n\n${words.join(' ')}\n`, rawData: '{}' },
      });
      expect([200, 201]).toContain(r.status);
    }
    let res: any;
    const deadline = Date.now() + 30_000;
    do {
      res = (await app.gql(a.token, SEARCH, { q })).body;
      if (res.data?.searchSessions?.total === 5) break;
      await new Promise((r) => setTimeout(r, 200));
    } while (Date.now() < deadline);
    expect(res.data.searchSessions.total).toBe(5);
    for (const hit of res.data.searchSessions.results) expect(hit.snippet).toContain(`<mark>${words[0]}</mark>`);
  }, 60_000);
});

describe('filter lists', () => {
  test('300,000 filter values → VALIDATION_ERROR naming the limit (no stack overflow, no 5xx)', async () => {
    const projectIds = Array.from({ length: 300_000 }, (_, i) => i.toString(36));
    for (const query of [SEARCH, 'query($f: SessionFilters) { sessions(filters: $f) { id } }']) {
      const r = await app.gql(a.token, query, { q: 'anything', f: { projectIds } });
      expect(r.status).toBe(200);
      expect(r.body.errors[0].extensions.code).toBe('VALIDATION_ERROR');
      expect(r.body.errors[0].message).toBe('Invalid value for projectIds: at most 100 values');
    }
  });

  test('101 values in a list → VALIDATION_ERROR; 100 are fine', async () => {
    const tags = Array.from({ length: 101 }, (_, i) => `tag${i}`);
    const r = await app.gql(a.token, SEARCH, { q: 'x', f: { tags } });
    expect(r.body.errors[0].message).toBe('Invalid value for tags: at most 100 values');
    const ok = await app.gql(a.token, SEARCH, { q: 'x', f: { tags: tags.slice(0, 100) } });
    expect(ok.body.errors).toBeUndefined();
  });
});

test('a GraphQL body over MAX_GRAPHQL_BODY_BYTES → 413, whatever the upload limit', async () => {
  const r = await app.gql(a.token, '{ __typename }', { pad: 'x'.repeat(GRAPHQL_LIMIT) });
  expect(r.status).toBe(413);
  expect(JSON.stringify(r.body)).not.toMatch(/at \w+ \(/);
  // Uploads keep their own (larger) limit.
  const up = await app.request('PUT', `/api/v1/projects/big/sessions/${crypto.randomUUID()}`, {
    token: a.token,
    body: { name: 'big', markdown: 'x'.repeat(GRAPHQL_LIMIT + 1024), rawData: '{}' },
  });
  expect([200, 201]).toContain(up.status);
});

test('automatic persisted queries are off: a hash alone runs nothing, and is not remembered from another user', async () => {
  const query = '{ __typename }';
  const sha256Hash = crypto.createHash('sha256').update(query).digest('hex');
  const persistedQuery = { version: 1, sha256Hash };
  const registered = await app.gql(a.token, query, undefined, { extensions: { persistedQuery } });
  expect(registered.body.data).toBeUndefined();
  expect(registered.body.errors[0].message).toMatch(/PersistedQueryNotSupported/);
  const b = await app.createUser('apq-b');
  const byHash = await app.request('POST', '/api/v1/graphql', { token: b.token, body: { extensions: { persistedQuery } } });
  expect(byHash.body?.data).toBeUndefined();
});

test('METRICS_TOKEN set: /metrics needs it as a Bearer token', async () => {
  const none = await app.request('GET', '/metrics');
  expect(none.status).toBe(401);
  expect(none.text).not.toMatch(/http_requests_total/);
  expect((await app.request('GET', '/metrics', { headers: { Authorization: 'Bearer wrong-token-of-some-length' } })).status).toBe(401);
  const ok = await app.request('GET', '/metrics', { headers: { Authorization: `Bearer ${METRICS_TOKEN}` } });
  expect(ok.status).toBe(200);
  expect(ok.text).toMatch(/# TYPE/);
});

describe('GraphQL content budget', () => {
  let contentApp: TestApp;
  let owner: TestUser;
  const MiB = 1024 * 1024;
  const LIST = '{ sessions(limit: 200) { name markdownSize markdownContent } }';

  beforeAll(async () => {
    // No search worker: twelve 8 MiB sessions would only load the shared test engine.
    contentApp = await startTestApp({ env: { WORKERS_ENABLED: 'false', RATE_LIMIT_GRAPHQL_PER_HOUR: '100000' } });
    owner = await contentApp.createUser('content-budget');
    const line = 'The quick brown fox jumps over the lazy dog, session content for the budget.\n';
    const markdown = line.repeat(Math.ceil((8 * MiB) / line.length)).slice(0, 8 * MiB);
    for (let i = 0; i < 12; i++) {
      const r = await contentApp.request('PUT', `/api/v1/projects/budget/sessions/${crypto.randomUUID()}`, {
        token: owner.token,
        body: { name: `big ${i}`, markdown, rawData: '{}' },
      });
      expect([200, 201]).toContain(r.status);
    }
  }, 180_000);

  afterAll(async () => {
    await contentApp?.close();
  });

  test('12 × 8 MiB of markdownContent in one response → VALIDATION_ERROR naming the budget, nothing loaded', async () => {
    const r = await contentApp.request('POST', '/api/v1/graphql', { token: owner.token, body: { query: LIST } });
    expect(r.status).toBe(200);
    expect(r.body.errors.length).toBeGreaterThan(0);
    for (const e of r.body.errors) {
      expect(e.extensions.code).toBe('VALIDATION_ERROR');
      expect(e.message).toMatch(/content budget: at most 64 MiB/);
    }
    // The whole batch was refused before loading: no session carries any content.
    expect(r.body.data).toBeNull();
  }, 60_000);

  test('the same sessions within the budget (7 × 8 MiB) are answered in full', async () => {
    const r = await contentApp.request('POST', '/api/v1/graphql', {
      token: owner.token,
      body: { query: '{ sessions(limit: 7) { markdownSize markdownContent } }' },
    });
    expect(r.body.errors).toBeUndefined();
    expect(r.body.data.sessions).toHaveLength(7);
    for (const s of r.body.data.sessions) expect(s.markdownContent.length).toBe(8 * MiB);
  }, 60_000);

  test('sizes alone cost nothing against the budget', async () => {
    const r = await contentApp.request('POST', '/api/v1/graphql', {
      token: owner.token,
      body: { query: '{ sessions(limit: 200) { markdownSize } }' },
    });
    expect(r.body.errors).toBeUndefined();
    expect(r.body.data.sessions).toHaveLength(12);
    expect(r.body.data.sessions.every((s: any) => s.markdownSize === 8 * MiB)).toBe(true);
  }, 60_000);
});
