import jwt from 'jsonwebtoken';
import { SID, startTestApp, type TestApp, type TestUser } from '../support/app';

let app: TestApp;
let a: TestUser;
let b: TestUser;

const SECRET = 'test-secret-that-is-long-enough';
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const KEY_FIELDS = ['createdAt', 'expiresAt', 'id', 'lastUsedAt', 'name', 'revokedAt', 'scopes', 'teamId', 'userId'];
const UNAUTH = { success: false, error: 'Invalid session token' };

beforeAll(async () => {
  app = await startTestApp();
  a = await app.createUser('a');
  b = await app.createUser('b');
});
afterAll(() => app.close());

describe('/api/v1/keys', () => {
  test('POST creates a key (201, token once) that authenticates', async () => {
    const u = await app.createUser('k');
    const r = await app.request('POST', '/api/v1/keys', { token: u.token, body: { name: 'laptop' } });
    expect(r.status).toBe(201);
    expect(r.body.success).toBe(true);
    expect(Object.keys(r.body.data).sort()).toEqual(['key', 'token']);
    const { key, token } = r.body.data;
    expect(Object.keys(key).sort()).toEqual(KEY_FIELDS);
    expect(key).toMatchObject({ userId: u.id, name: 'laptop', lastUsedAt: null, expiresAt: null, revokedAt: null });
    expect(key.createdAt).toMatch(ISO);
    expect(typeof token).toBe('string');
    const decoded = jwt.decode(token, { complete: true }) as any;
    expect(decoded.header.alg).toBe('HS256');
    expect(decoded.payload).toMatchObject({ sub: u.id, jti: key.id });
    expect(decoded.payload.exp).toBeUndefined();
    expect((await app.request('GET', '/api/v1/projects', { token })).status).toBe(200);

    const list = await app.request('GET', '/api/v1/keys', { token });
    expect(list.status).toBe(200);
    expect(list.body.data.total).toBe(2);
    expect(list.body.data.keys.map((k: any) => k.id).sort()).toEqual([u.keyId, key.id].sort());
    for (const k of list.body.data.keys) expect(Object.keys(k).sort()).toEqual(KEY_FIELDS);
    expect(list.text).not.toContain(token);
    expect(list.text).not.toContain(u.token);
  });

  test('lastUsedAt is recorded after the key is used', async () => {
    const u = await app.createUser('lu');
    let last: string | null = null;
    for (let i = 0; i < 50 && !last; i++) {
      const r = await app.request('GET', '/api/v1/keys', { token: u.token });
      last = r.body.data.keys.find((k: any) => k.id === u.keyId).lastUsedAt;
      if (!last) await new Promise((res) => setTimeout(res, 50));
    }
    expect(last).toMatch(ISO);
    expect(Math.abs(Date.parse(last!) - Date.now())).toBeLessThan(5 * 60_000);
  });

  test('expiresInDays sets expiresAt and exp', async () => {
    const t0 = Date.now();
    const r = await app.request('POST', '/api/v1/keys', { token: a.token, body: { name: 'exp', expiresInDays: 30 } });
    expect(r.status).toBe(201);
    const exp = Date.parse(r.body.data.key.expiresAt);
    expect(Math.abs(exp - (t0 + 30 * 86_400_000))).toBeLessThan(120_000);
    const payload = jwt.decode(r.body.data.token) as any;
    expect(payload.exp).toBe(Math.floor(exp / 1000));
    for (const days of [1, 3650]) {
      expect((await app.request('POST', '/api/v1/keys', { token: a.token, body: { name: 'e', expiresInDays: days } })).status).toBe(201);
    }
  });

  test('POST validation → 400', async () => {
    const bad = [
      {},
      { name: '' },
      { name: 'x'.repeat(101) },
      { name: 5 },
      { name: 'x', expiresInDays: 0 },
      { name: 'x', expiresInDays: 3651 },
      { name: 'x', expiresInDays: 1.5 },
      { name: 'x', expiresInDays: '5' },
      { name: 'x', expiresInDays: -1 },
    ];
    for (const body of bad) {
      const r = await app.request('POST', '/api/v1/keys', { token: a.token, body });
      expect([body, r.status]).toEqual([body, 400]);
      expect(r.body.success).toBe(false);
    }
    expect((await app.request('POST', '/api/v1/keys', { token: a.token, body: {} })).body.error).toBe('Missing required field: name');
    expect((await app.request('POST', '/api/v1/keys', { token: a.token, body: { name: '😀'.repeat(100) } })).status).toBe(201);
  });

  test('DELETE revokes own key (200, revokedAt); the next request with it → 401; other keys work', async () => {
    const u = await app.createUser('rev');
    const k2 = await app.newKey(u, 'second');
    const r = await app.request('DELETE', `/api/v1/keys/${k2.keyId}`, { token: u.token });
    expect(r.status).toBe(200);
    expect(Object.keys(r.body.data)).toEqual(['key']);
    expect(r.body.data.key).toMatchObject({ id: k2.keyId, userId: u.id, name: 'second' });
    expect(r.body.data.key.revokedAt).toMatch(ISO);
    const refused = await app.request('GET', '/api/v1/projects', { token: k2.token });
    expect(refused).toMatchObject({ status: 401, body: UNAUTH });
    expect((await app.request('GET', '/api/v1/projects', { token: u.token })).status).toBe(200);
    const list = await app.request('GET', '/api/v1/keys', { token: u.token });
    expect(list.body.data.keys.find((k: any) => k.id === k2.keyId).revokedAt).toBe(r.body.data.key.revokedAt);
  });

  test("another user's key → 404 (and it keeps working); unknown id → 404", async () => {
    const r = await app.request('DELETE', `/api/v1/keys/${b.keyId}`, { token: a.token });
    expect(r.status).toBe(404);
    expect(r.body.success).toBe(false);
    expect((await app.request('GET', '/api/v1/projects', { token: b.token })).status).toBe(200);
    expect((await app.request('DELETE', '/api/v1/keys/does-not-exist', { token: a.token })).status).toBe(404);
    const keysOfA = await app.request('GET', '/api/v1/keys', { token: a.token });
    expect(keysOfA.body.data.keys.map((k: any) => k.id)).not.toContain(b.keyId);
  });

  test('a key may revoke itself and is refused afterwards', async () => {
    const u = await app.createUser('self');
    const other = await app.newKey(u, 'other');
    const r = await app.request('DELETE', `/api/v1/keys/${u.keyId}`, { token: u.token });
    expect(r.status).toBe(200);
    expect(r.body.data.key.revokedAt).toMatch(ISO);
    expect(await app.request('GET', '/api/v1/keys', { token: u.token })).toMatchObject({ status: 401, body: UNAUTH });
    expect((await app.request('GET', '/api/v1/keys', { token: other.token })).status).toBe(200);
  });
});

describe('authentication', () => {
  test('missing, malformed, wrong-secret, alg none, unknown jti → 401 Invalid session token', async () => {
    const payload = { sub: a.id, jti: a.keyId };
    const tokens: Array<string | undefined> = [
      undefined,
      'garbage',
      jwt.sign(payload, 'another-secret-that-is-long'),
      jwt.sign(payload, SECRET, { algorithm: 'HS512' }),
      `${Buffer.from('{"alg":"none","typ":"JWT"}').toString('base64url')}.${Buffer.from(JSON.stringify(payload)).toString('base64url')}.`,
      jwt.sign({ sub: a.id, jti: 'no-such-key' }, SECRET),
      jwt.sign({ sub: b.id, jti: a.keyId }, SECRET),
    ];
    for (const token of tokens) {
      const r = await app.request('GET', '/api/v1/projects', { token });
      expect(r).toMatchObject({ status: 401, body: UNAUTH });
    }
    const basic = await app.request('GET', '/api/v1/projects', { headers: { Authorization: `Basic ${a.token}` } });
    expect(basic.status).toBe(401);
    // Control: a correctly signed token for the key works.
    expect((await app.request('GET', '/api/v1/projects', { token: jwt.sign(payload, SECRET) })).status).toBe(200);
  });

  test('expired key row → 401; token exp in the past → 401; nbf in the future → 401', async () => {
    const u = await app.createUser('exp');
    const k = await app.newKey(u, 'soon', 1);
    expect((await app.request('GET', '/api/v1/projects', { token: k.token })).status).toBe(200);
    await app.deps.db.pool.query('UPDATE api_keys SET expiresAt = ? WHERE id = ?', [new Date(Date.now() - 1000), k.keyId]);
    expect(await app.request('GET', '/api/v1/projects', { token: k.token })).toMatchObject({ status: 401, body: UNAUTH });
    const past = jwt.sign({ sub: u.id, jti: u.keyId, exp: Math.floor(Date.now() / 1000) - 10 }, SECRET);
    expect((await app.request('GET', '/api/v1/projects', { token: past })).status).toBe(401);
    const nbf = jwt.sign({ sub: u.id, jti: u.keyId, nbf: Math.floor(Date.now() / 1000) + 3600 }, SECRET);
    expect((await app.request('GET', '/api/v1/projects', { token: nbf })).status).toBe(401);
    expect((await app.request('GET', '/api/v1/projects', { token: u.token })).status).toBe(200);
  });

  test('revocation in the database takes effect on the next request', async () => {
    const u = await app.createUser('dbrev');
    const k = await app.newKey(u);
    expect((await app.request('GET', '/api/v1/projects', { token: k.token })).status).toBe(200);
    await app.deps.db.pool.query('UPDATE api_keys SET revokedAt = NOW(3) WHERE id = ?', [k.keyId]);
    expect((await app.request('GET', '/api/v1/projects', { token: k.token })).status).toBe(401);
    expect((await app.request('GET', '/api/v1/projects', { token: u.token })).status).toBe(200);
  });

  test('unknown /api path: 401 without token, 404 with one', async () => {
    for (const path of ['/api/v1/nope', '/api/v2/projects', '/api/other', '/api/v1/projects/x/y/z/w']) {
      expect(await app.request('GET', path)).toMatchObject({ status: 401, body: UNAUTH });
      expect(await app.request('GET', path, { token: a.token })).toMatchObject({ status: 404, body: { success: false, error: 'Not found' } });
    }
  });

  test('order of checks: 401 before 400 before 404/403', async () => {
    // 401 beats invalid JSON and unknown resources.
    const badJson = { body: '{', headers: { 'Content-Type': 'application/json' } };
    expect((await app.request('PUT', `/api/v1/projects/p/sessions/${SID(1)}`, badJson)).status).toBe(401);
    expect((await app.request('GET', '/api/v1/projects/unknown')).status).toBe(401);
    expect((await app.request('GET', '/api/v1/sessions/recent?limit=0')).status).toBe(401);
    // 400 beats 404 and 403.
    await app.request('PUT', `/api/v1/projects/a-owned/sessions/${SID(1)}`, { token: a.token, body: { name: 's', markdown: 'm' } });
    expect((await app.request('PUT', `/api/v1/projects/a-owned/sessions/${SID(2)}`, { token: b.token, ...badJson })).status).toBe(400);
    expect((await app.request('PUT', `/api/v1/projects/a-owned/sessions/${SID(2)}`, { token: b.token, body: { markdown: 'm' } })).status).toBe(400);
    expect((await app.request('GET', '/api/v1/projects/a-owned/sessions?limit=0', { token: b.token })).status).toBe(400);
    expect((await app.request('GET', '/api/v1/projects/nope/sessions?limit=0', { token: a.token })).status).toBe(400);
    expect((await app.request('PATCH', '/api/v1/projects/a-owned', { token: b.token, body: { color: 'x' } })).status).toBe(400);
    expect((await app.request('PATCH', `/api/v1/projects/a-owned/sessions/${SID(1)}`, { token: b.token, body: {} })).status).toBe(400);
  });
});

describe('cross-user access', () => {
  const P = 'xa-proj';
  const url = `/api/v1/projects/${P}/sessions/${SID(1)}`;
  const snapshot = async () => ({
    project: (await app.request('GET', `/api/v1/projects/${P}`, { token: a.token })).body,
    session: (await app.request('GET', url, { token: a.token })).body,
    raw: (await app.request('GET', `${url}/raw`, { token: a.token })).text,
    list: (await app.request('GET', `/api/v1/projects/${P}/sessions`, { token: a.token })).body,
  });

  test("user B gets 403 Insufficient permissions on each of A's resources; A's data unchanged", async () => {
    await app.request('POST', '/api/v1/projects', { token: a.token, body: { id: P, name: 'A private', color: 'slate' } });
    await app.request('PUT', url, { token: a.token, body: { name: 'secret', markdown: 'TOP SECRET', rawData: 'RAW SECRET', metadata: { tags: ['t'] } } });
    const before = await snapshot();
    const attempts: Array<[string, string, unknown?]> = [
      ['GET', `/api/v1/projects/${P}`],
      ['PATCH', `/api/v1/projects/${P}`, { name: 'pwned' }],
      ['DELETE', `/api/v1/projects/${P}`],
      ['POST', '/api/v1/projects', { id: P, name: 'mine now' }],
      ['GET', `/api/v1/projects/${P}/sessions`],
      ['GET', `/api/v1/projects/${P}/sessions/sizes`],
      ['GET', url],
      ['GET', `${url}/raw`],
      ['PUT', url, { name: 'x', markdown: 'overwritten' }],
      ['PUT', `/api/v1/projects/${P}/sessions/${SID(2)}`, { name: 'x', markdown: 'added' }],
      ['PATCH', url, { name: 'renamed' }],
      ['DELETE', url],
    ];
    for (const [method, path, body] of attempts) {
      const r = await app.request(method, path, { token: b.token, body });
      // Teams: an upload into another account's project says how to fix it; everything else is the plain 403.
      const error = method === 'PUT' ? `Project ${P} belongs to another account. ${r.body.error?.split('. ').slice(1).join('. ')}` : 'Insufficient permissions';
      expect([method, path, r.status, r.body]).toEqual([method, path, 403, { success: false, error }]);
      expect(r.text).not.toContain('SECRET');
    }
    const head = await app.request('HEAD', url, { token: b.token });
    expect(head.status).toBe(403);
    expect(head.headers.etag).toBeUndefined();
    const md = await app.request('GET', url, { token: b.token, headers: { Accept: 'text/markdown' } });
    expect(md.status).toBe(403);
    expect(md.text).not.toContain('SECRET');
    expect(await snapshot()).toEqual(before);
    const bList = await app.request('GET', '/api/v1/projects', { token: b.token });
    expect(bList.body.data.projects.map((p: any) => p.id)).not.toContain(P);
    const bRecent = await app.request('GET', '/api/v1/sessions/recent?limit=100', { token: b.token });
    expect(bRecent.body.data.sessions.map((s: any) => s.projectId)).not.toContain(P);
  });
});
