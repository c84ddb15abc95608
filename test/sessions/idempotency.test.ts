/**
 * Idempotency-Key on PUT and POST, with the headers both SDKs send: the first
 * response comes back for a repeat within 24 hours, per user; another request with the key → 422;
 * concurrent repeats make one write.
 */
import crypto from 'node:crypto';
import zlib from 'node:zlib';
import { startTestApp, type TestApp, type TestUser } from '../support/app';
import { pySdk, tsSdk } from '../support/specstory-clients';

let app: TestApp;
let a: TestUser;
let b: TestUser;

beforeAll(async () => {
  app = await startTestApp({ env: { RATE_LIMIT_REST_PER_HOUR: '100000' } });
  a = await app.createUser('a');
  b = await app.createUser('b');
});
afterAll(() => app?.close());

const key = () => `key-${crypto.randomUUID()}`;
const projectIds = async (u: TestUser) => (await tsSdk(app, u.token, 'GET', '/api/v1/projects')).body.data.projects.map((p: any) => p.id);

describe('a repeat returns the first response without acting again', () => {
  test('TypeScript SDK: sessions.write (PUT) twice with one key → the first 201, body and ETag', async () => {
    const k = key();
    const sid = crypto.randomUUID();
    const body = {
      name: 'Test Session',
      markdown: '# Test Session\n\nThis is a test session content.',
      rawData: '{"test":true}',
      metadata: { clientName: 'example-app', tags: ['test', 'demo'] },
      projectName: 'Test Session',
    };
    const first = await tsSdk(app, a.token, 'PUT', `/api/v1/projects/idem-ts/sessions/${sid}`, body, k);
    expect(first.status).toBe(201);
    const again = await tsSdk(app, a.token, 'PUT', `/api/v1/projects/idem-ts/sessions/${sid}`, body, k);
    expect(again.status).toBe(201); // without the key an identical re-PUT is a 200
    expect(again.body).toEqual(first.body);
    expect(again.headers.etag).toBe(first.headers.etag);
    expect(again.headers['idempotent-replayed']).toBe('true');
    // Without the key: acts (200, unchanged).
    expect((await tsSdk(app, a.token, 'PUT', `/api/v1/projects/idem-ts/sessions/${sid}`, body)).status).toBe(200);
  });

  test('Python SDK: POST /projects without id twice with one key → one project', async () => {
    const k = key();
    const before = await projectIds(a);
    const first = await pySdk(app, a.token, 'POST', '/api/v1/projects', { name: 'Made once' }, k);
    expect(first.status).toBe(201);
    const again = await pySdk(app, a.token, 'POST', '/api/v1/projects', { name: 'Made once' }, k);
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect((await projectIds(a)).length).toBe(before.length + 1);
  });

  test('an error answer is the first response too: a 409 stays a 409', async () => {
    await tsSdk(app, a.token, 'POST', '/api/v1/projects', { id: 'idem-exists', name: 'x' });
    const k = key();
    const first = await tsSdk(app, a.token, 'POST', '/api/v1/projects', { id: 'idem-exists', name: 'x' }, k);
    expect(first.status).toBe(409);
    await tsSdk(app, a.token, 'DELETE', '/api/v1/projects/idem-exists');
    const again = await tsSdk(app, a.token, 'POST', '/api/v1/projects', { id: 'idem-exists', name: 'x' }, k);
    expect(again).toMatchObject({ status: 409, body: first.body });
    expect(await projectIds(a)).not.toContain('idem-exists');
  });

  test('a gzip body and the same JSON uncompressed are the same request', async () => {
    const k = key();
    const sid = crypto.randomUUID();
    const json = Buffer.from(JSON.stringify({ name: 'gz', markdown: '# gz' }));
    const headers = { 'Content-Type': 'application/json', 'Idempotency-Key': k };
    const first = await app.request('PUT', `/api/v1/projects/idem-gz/sessions/${sid}`, {
      token: a.token,
      body: zlib.gzipSync(json),
      headers: { ...headers, 'Content-Encoding': 'gzip' },
    });
    expect(first.status).toBe(201);
    const again = await app.request('PUT', `/api/v1/projects/idem-gz/sessions/${sid}`, { token: a.token, body: json, headers });
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
  });
});

describe('the same key with another request → 422', () => {
  test('another body on the same method and path; another query string', async () => {
    const k = key();
    const sid = crypto.randomUUID();
    expect((await tsSdk(app, a.token, 'PUT', `/api/v1/projects/idem-x/sessions/${sid}`, { name: 'n', markdown: 'one' }, k)).status).toBe(201);
    const other = await tsSdk(app, a.token, 'PUT', `/api/v1/projects/idem-x/sessions/${sid}`, { name: 'n', markdown: 'two' }, k);
    expect(other).toMatchObject({ status: 422, body: { success: false, error: 'Idempotency key reused with a different request' } });
    const query = await tsSdk(app, a.token, 'PUT', `/api/v1/projects/idem-x/sessions/${sid}?x=1`, { name: 'n', markdown: 'one' }, k);
    expect(query.status).toBe(422);
    // Nothing was written by the refused requests.
    const md = await app.request('GET', `/api/v1/projects/idem-x/sessions/${sid}`, { token: a.token, headers: { Accept: 'text/markdown' } });
    expect(md.text).toBe('one');
  });

  test('the same key on another path or method is another key: it acts', async () => {
    const k = key();
    const s1 = crypto.randomUUID();
    const s2 = crypto.randomUUID();
    expect((await tsSdk(app, a.token, 'PUT', `/api/v1/projects/idem-y/sessions/${s1}`, { name: 'n', markdown: 'one' }, k)).status).toBe(201);
    const elsewhere = await tsSdk(app, a.token, 'PUT', `/api/v1/projects/idem-y/sessions/${s2}`, { name: 'n', markdown: 'two' }, k);
    expect(elsewhere.status).toBe(201);
    expect(elsewhere.headers['idempotent-replayed']).toBeUndefined();
    expect(elsewhere.body.data.sessionId).toBe(s2);
    const post = await tsSdk(app, a.token, 'POST', '/api/v1/projects', { id: 'idem-y2', name: 'y' }, k);
    expect(post.status).toBe(201);
    // Each path still replays its own first answer.
    const again = await tsSdk(app, a.token, 'PUT', `/api/v1/projects/idem-y/sessions/${s1}`, { name: 'n', markdown: 'one' }, k);
    expect(again).toMatchObject({ status: 201, headers: { 'idempotent-replayed': 'true' } });
    expect(again.body.data.sessionId).toBe(s1);
    const md = await app.request('GET', `/api/v1/projects/idem-y/sessions/${s2}`, { token: a.token, headers: { Accept: 'text/markdown' } });
    expect(md.text).toBe('two');
  });

  test('keys are per user: the same key for another user acts for them', async () => {
    const k = key();
    expect((await tsSdk(app, a.token, 'POST', '/api/v1/projects', { id: 'idem-a', name: 'A' }, k)).status).toBe(201);
    const forB = await tsSdk(app, b.token, 'POST', '/api/v1/projects', { id: 'idem-b', name: 'B' }, k);
    expect(forB.status).toBe(201);
    expect(forB.body.data.project.id).toBe('idem-b');
    expect(await projectIds(b)).toEqual(['idem-b']);
  });

  test('after 24 hours the key is forgotten', async () => {
    const k = key();
    expect((await tsSdk(app, a.token, 'POST', '/api/v1/projects', { id: 'idem-old1', name: 'x' }, k)).status).toBe(201);
    await app.deps.db.prisma.$executeRawUnsafe(
      'UPDATE idempotency_keys SET createdAt = ? WHERE userId = ? AND idemKey = ?',
      new Date(Date.now() - 24 * 3600 * 1000 - 60_000),
      a.id,
      k,
    );
    const later = await tsSdk(app, a.token, 'POST', '/api/v1/projects', { id: 'idem-old2', name: 'x' }, k);
    expect(later.status).toBe(201);
    expect(later.body.data.project.id).toBe('idem-old2');
  });

  test('a malformed key → 400; a key on POST /keys is not honoured (tokens are never stored)', async () => {
    const bad = await tsSdk(app, a.token, 'POST', '/api/v1/projects', { name: 'x' }, 'has space');
    expect(bad).toMatchObject({ status: 400, body: { success: false, error: 'Invalid Idempotency-Key: 1 to 255 visible ASCII characters' } });
    expect((await tsSdk(app, a.token, 'POST', '/api/v1/projects', { name: 'x' }, 'k'.repeat(256))).status).toBe(400);
    const k = key();
    const k1 = await tsSdk(app, a.token, 'POST', '/api/v1/keys', { name: 'one' }, k);
    const k2 = await tsSdk(app, a.token, 'POST', '/api/v1/keys', { name: 'one' }, k);
    expect(k1.status).toBe(201);
    expect(k2.status).toBe(201);
    expect(k2.body.data.token).not.toBe(k1.body.data.token); // tokens are never stored
    const rows = await app.deps.db.prisma.$queryRawUnsafe<unknown[]>('SELECT 1 FROM idempotency_keys WHERE idemKey = ?', k);
    expect(rows).toEqual([]);
  });
});

describe('concurrent repeats', () => {
  test('10 parallel POSTs with one key → one project, ten identical answers', async () => {
    const k = key();
    const before = (await projectIds(a)).length;
    const rs = await Promise.all(Array.from({ length: 10 }, () => tsSdk(app, a.token, 'POST', '/api/v1/projects', { name: 'Parallel' }, k)));
    expect(rs.map((r) => r.status)).toEqual(Array(10).fill(201));
    const ids = new Set(rs.map((r) => r.body.data.project.id));
    expect(ids.size).toBe(1);
    expect((await projectIds(a)).length).toBe(before + 1);
  });

  test('10 parallel PUTs with one key → all get the 201 of the single write', async () => {
    const k = key();
    const sid = crypto.randomUUID();
    const body = { name: 'p', markdown: '# parallel', rawData: 'r' };
    const rs = await Promise.all(Array.from({ length: 10 }, () => pySdk(app, a.token, 'PUT', `/api/v1/projects/idem-par/sessions/${sid}`, body, k)));
    expect(rs.map((r) => r.status)).toEqual(Array(10).fill(201));
    expect(new Set(rs.map((r) => JSON.stringify(r.body))).size).toBe(1);
    expect(new Set(rs.map((r) => r.headers.etag)).size).toBe(1);
  });
});

describe('the OpenAPI document says the same', () => {
  test('PUT and POST take the header (409, 422, Idempotent-Replayed); POST /keys does not', async () => {
    const doc = (await app.request('GET', '/api/v1/openapi.json')).body;
    const put = doc.paths['/projects/{projectId}/sessions/{sessionId}'].put;
    expect(put.parameters.map((p: any) => p.name)).toContain('Idempotency-Key');
    expect(Object.keys(put.responses)).toEqual(expect.arrayContaining(['409', '422']));
    expect(Object.keys(put.responses['201'].headers)).toContain('Idempotent-Replayed');
    const keys = doc.paths['/keys'].post;
    expect((keys.parameters ?? []).map((p: any) => p.name)).not.toContain('Idempotency-Key');
    expect(keys.responses['422']).toBeUndefined();
  });
});
