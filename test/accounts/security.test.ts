/**
 * Security hardening: headers (helmet) and CORS, ownership on every REST endpoint and GraphQL
 * field, every kind of bad token, and a fuzz pass of malformed requests — always 4xx, never a
 * 5xx, never a stack, SQL or token in a response, and the service healthy afterwards.
 */
import crypto from 'node:crypto';
import zlib from 'node:zlib';
import jwt from 'jsonwebtoken';
import { startTestApp, type TestApp, type TestResponse, type TestUser } from '../support/app';

const JWT_SECRET = 'test-secret-that-is-long-enough';
const INVALID_TOKEN = { success: false, error: 'Invalid session token' };

/** Nothing internal in a response: no stack frames, SQL, driver names or tokens. */
function expectNoLeak(r: TestResponse, tokens: string[] = []): void {
  const t = r.text;
  expect(t).not.toMatch(/\bat [^\s]+ \(?[^\s]*\.(ts|js|mjs|cjs):\d+/);
  expect(t).not.toMatch(/node_modules|\/work\/|\/src\//);
  expect(t).not.toMatch(/\b(SELECT|INSERT INTO|UPDATE \w+ SET|DELETE FROM)\b/);
  expect(t).not.toMatch(/prisma|mariadb|SqlError|sqlState/i);
  expect(t).not.toMatch(/\bER_[A-Z_]{3,}/);
  for (const tok of tokens) expect(t).not.toContain(tok);
}

const b64url = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');

describe('security headers and CORS', () => {
  let app: TestApp;
  let noCors: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ env: { CORS_ORIGINS: 'https://app.example.com, https://other.example.org' } });
    noCors = await startTestApp({ db: app.db });
  });
  afterAll(async () => {
    await noCors.close();
    await app.close();
  });

  it('sends API-appropriate security headers on JSON responses and errors', async () => {
    const user = await app.createUser('hdr');
    for (const r of [
      await app.request('GET', '/api/v1/projects', { token: user.token }),
      await app.request('GET', '/api/v1/projects'),
      await app.request('GET', '/healthz'),
      await app.request('GET', '/nope'),
    ]) {
      expect(r.headers['x-content-type-options']).toBe('nosniff');
      expect(r.headers['content-security-policy']).toMatch(/default-src 'none'/);
      expect(r.headers['content-security-policy']).toMatch(/frame-ancestors 'none'/);
      expect(r.headers['x-frame-options']).toBe('SAMEORIGIN');
      expect(r.headers['strict-transport-security']).toMatch(/max-age=\d+/);
      expect(r.headers['referrer-policy']).toBe('no-referrer');
      expect(r.headers['x-powered-by']).toBeUndefined();
    }
  });

  it('lets the GraphQL playground load its own scripts and styles, nothing from elsewhere', async () => {
    const page = await app.request('GET', '/api/v1/graphql', { headers: { Accept: 'text/html' } });
    expect(page.status).toBe(200);
    const csp = String(page.headers['content-security-policy']);
    expect(csp).toMatch(/script-src 'self'(;|$)/);
    expect(csp).toMatch(/style-src 'self' 'unsafe-inline'/);
    expect(csp).not.toMatch(/https?:|\*/);
    // Every script the page loads is same-origin and served.
    const srcs = [...page.text.matchAll(/<script[^>]*\ssrc="([^"]+)"/g)].map((m) => m[1]);
    expect(srcs.length).toBeGreaterThan(0);
    for (const src of srcs) {
      expect(src).not.toMatch(/^(https?:)?\/\//);
      const asset = await app.request('GET', new URL(src, `${app.url}/api/v1/graphql`).pathname);
      expect(asset.status).toBe(200);
    }
    // No inline script needs 'unsafe-inline'.
    expect(page.text).not.toMatch(/<script(?![^>]*\ssrc=)[^>]*>\s*\S/);
  });

  it('answers CORS only for configured origins', async () => {
    const user = await app.createUser('cors');
    const allowed = await app.request('GET', '/api/v1/projects', { token: user.token, headers: { Origin: 'https://app.example.com' } });
    expect(allowed.headers['access-control-allow-origin']).toBe('https://app.example.com');
    expect(String(allowed.headers['access-control-expose-headers'])).toMatch(/X-RateLimit-Remaining/);
    expect(String(allowed.headers['access-control-expose-headers'])).toMatch(/X-Session-Data-Size.*Idempotent-Replayed/);
    expect(allowed.headers['access-control-allow-credentials']).toBeUndefined();

    const preflight = await app.request('OPTIONS', '/api/v1/projects', {
      headers: { Origin: 'https://other.example.org', 'Access-Control-Request-Method': 'PUT', 'Access-Control-Request-Headers': 'authorization,content-type' },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers['access-control-allow-origin']).toBe('https://other.example.org');
    expect(String(preflight.headers['access-control-allow-methods'])).toMatch(/PUT/);
    expect(String(preflight.headers['access-control-allow-headers']).toLowerCase()).toMatch(/authorization/);
    expect(String(preflight.headers['access-control-allow-headers']).toLowerCase()).toMatch(/idempotency-key/);

    const evil = await app.request('GET', '/api/v1/projects', { token: user.token, headers: { Origin: 'https://evil.example.net' } });
    expect(evil.status).toBe(200);
    expect(evil.headers['access-control-allow-origin']).toBeUndefined();
    const evilPreflight = await app.request('OPTIONS', '/api/v1/projects', {
      headers: { Origin: 'https://evil.example.net', 'Access-Control-Request-Method': 'DELETE' },
    });
    expect(evilPreflight.headers['access-control-allow-origin']).toBeUndefined();
    expect(evilPreflight.headers['access-control-allow-methods']).toBeUndefined();

    // CORS_ORIGINS empty: no cross-origin access at all.
    const none = await noCors.request('GET', '/api/v1/projects', { token: user.token, headers: { Origin: 'https://app.example.com' } });
    expect(none.status).toBe(200);
    expect(none.headers['access-control-allow-origin']).toBeUndefined();
  });
});

describe('ownership: another user’s ids', () => {
  let app: TestApp;
  let a: TestUser;
  let b: TestUser;
  const projectId = `sec-a-${crypto.randomBytes(4).toString('hex')}`;
  const sessionId = crypto.randomUUID();

  beforeAll(async () => {
    app = await startTestApp();
    a = await app.createUser('owner');
    b = await app.createUser('intruder');
    const put = await app.request('PUT', `/api/v1/projects/${projectId}/sessions/${sessionId}`, {
      token: a.token,
      body: { name: 'secret session', markdown: '# secret\nonly for a', rawData: 'raw-bytes', projectName: 'A project', metadata: { tags: ['t1'] } },
    });
    expect(put.status).toBe(201);
  });
  afterAll(async () => {
    await app.close();
  });

  const snapshot = async () => {
    const project = await app.request('GET', `/api/v1/projects/${projectId}`, { token: a.token });
    const session = await app.request('GET', `/api/v1/projects/${projectId}/sessions/${sessionId}`, { token: a.token });
    const raw = await app.request('GET', `/api/v1/projects/${projectId}/sessions/${sessionId}/raw`, { token: a.token });
    const keys = await app.request('GET', '/api/v1/keys', { token: a.token });
    expect([project.status, session.status, raw.status, keys.status]).toEqual([200, 200, 200, 200]);
    return { project: project.body.data.project, session: session.body.data.session, raw: raw.text, keys: keys.body.data.keys };
  };

  it('answers 403 on every REST endpoint and changes nothing', async () => {
    const before = await snapshot();
    const p = `/api/v1/projects/${projectId}`;
    const s = `${p}/sessions/${sessionId}`;
    const matrix: Array<[string, string, unknown?, Record<string, string>?]> = [
      ['GET', p],
      ['PATCH', p, { name: 'hijacked' }],
      ['DELETE', p],
      ['POST', '/api/v1/projects', { id: projectId, name: 'mine now' }],
      ['GET', `${p}/sessions`],
      ['GET', `${p}/sessions/sizes`],
      ['GET', s],
      ['GET', s, undefined, { Accept: 'text/markdown' }],
      ['GET', `${s}/raw`],
      ['PUT', s, { name: 'overwritten', markdown: 'gone' }],
      ['PUT', `${p}/sessions/${crypto.randomUUID()}`, { name: 'planted', markdown: 'x' }],
      ['PATCH', s, { name: 'renamed', tags: ['x'] }],
      ['DELETE', s],
    ];
    for (const [method, path, body, headers] of matrix) {
      const r = await app.request(method, path, { token: b.token, body, headers });
      // An upload into another account's project says whose it is not and how to share it.
      const error = method === 'PUT' ? expect.stringMatching(new RegExp(`^Project ${projectId} belongs to another account\\.`)) : 'Insufficient permissions';
      expect({ method, path, status: r.status, body: r.body }).toEqual({ method, path, status: 403, body: { success: false, error } });
      expectNoLeak(r, [a.token, b.token]);
    }
    const head = await app.request('HEAD', s, { token: b.token });
    expect(head.status).toBe(403);
    expect(head.raw.length).toBe(0);
    expect(head.headers.etag).toBeUndefined();

    // Another user's key: 404, and it stays valid.
    const revoke = await app.request('DELETE', `/api/v1/keys/${a.keyId}`, { token: b.token });
    expect(revoke.status).toBe(404);

    // Lists never show a's things to b.
    const lists = await Promise.all([
      app.request('GET', '/api/v1/projects', { token: b.token }),
      app.request('GET', '/api/v1/sessions/recent?limit=100', { token: b.token }),
      app.request('GET', '/api/v1/keys', { token: b.token }),
    ]);
    for (const l of lists) {
      expect(l.status).toBe(200);
      expect(l.text).not.toContain(projectId);
      expect(l.text).not.toContain(sessionId);
      expect(l.text).not.toContain(a.keyId);
    }

    expect(await snapshot()).toEqual(before);
    expect(before.keys.find((k: any) => k.id === a.keyId).revokedAt).toBeNull();
  });

  it('answers FORBIDDEN / NOT_FOUND on every GraphQL field and mutation and changes nothing', async () => {
    const before = await snapshot();
    const gql = (query: string, variables: Record<string, unknown> = {}) =>
      app.request('POST', '/api/v1/graphql', { token: b.token, body: { query, variables } });
    const vars = { p: projectId, s: sessionId, k: a.keyId };
    const cases: Array<[string, string, string]> = [
      ['project', 'query($p: ID!) { project(id: $p) { id name } }', 'FORBIDDEN'],
      ['session with project', 'query($p: ID!, $s: ID!) { session(id: $s, projectId: $p) { id name } }', 'FORBIDDEN'],
      ['session by id alone', 'query($s: ID!) { session(id: $s) { id name } }', 'NOT_FOUND'],
      ['updateProject', 'mutation($p: ID!) { updateProject(id: $p, input: { name: "hijacked" }) { id } }', 'FORBIDDEN'],
      ['deleteProject', 'mutation($p: ID!) { deleteProject(id: $p) { deletedAt } }', 'FORBIDDEN'],
      ['createProject', 'mutation($p: ID!) { createProject(input: { id: $p, name: "mine" }) { id } }', 'FORBIDDEN'],
      ['updateSession', 'mutation($p: ID!, $s: ID!) { updateSession(projectId: $p, id: $s, input: { name: "x" }) { id } }', 'FORBIDDEN'],
      ['deleteSession', 'mutation($p: ID!, $s: ID!) { deleteSession(projectId: $p, id: $s) }', 'FORBIDDEN'],
      ['revokeApiKey', 'mutation($k: ID!) { revokeApiKey(id: $k) { id revokedAt } }', 'NOT_FOUND'],
    ];
    for (const [name, query, code] of cases) {
      const used = Object.fromEntries(Object.entries(vars).filter(([k]) => query.includes(`$${k}:`)));
      const r = await gql(query, used);
      expect({ name, code: r.body?.errors?.[0]?.extensions?.code }).toEqual({ name, code });
      expect(JSON.stringify(r.body?.data ?? null)).not.toContain('secret');
      expectNoLeak(r, [a.token, b.token]);
    }
    const lists = await gql('{ projects { id } sessions(limit: 200) { id } apiKeys { id } }');
    expect(lists.status).toBe(200);
    expect(lists.body.errors).toBeUndefined();
    expect(lists.text).not.toContain(projectId);
    expect(lists.text).not.toContain(sessionId);
    expect(lists.text).not.toContain(a.keyId);
    expect(await snapshot()).toEqual(before);
  });
});

describe('bad tokens', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ env: { JWT_SECRET } });
  });
  afterAll(async () => {
    await app.close();
  });

  it('answers 401 for forged, alg:none, foreign-secret, HS512, expired, not-yet-valid, revoked, unknown and garbage tokens', async () => {
    const a = await app.createUser('tok-a');
    const b = await app.createUser('tok-b');
    const now = Math.floor(Date.now() / 1000);
    const [h, , sig] = a.token.split('.');
    const revoked = await app.newKey(a, 'to-revoke');
    expect((await app.request('DELETE', `/api/v1/keys/${revoked.keyId}`, { token: a.token })).status).toBe(200);
    const shortLived = await app.newKey(a, 'short', 1);
    await app.deps.db.prisma.apiKey.update({ where: { id: shortLived.keyId }, data: { expiresAt: new Date(Date.now() - 1000) } });

    const bad: Record<string, string> = {
      forgedPayload: `${h}.${b64url({ sub: b.id, jti: a.keyId, iat: now })}.${sig}`,
      algNone: `${b64url({ alg: 'none', typ: 'JWT' })}.${b64url({ sub: a.id, jti: a.keyId, iat: now })}.`,
      otherSecret: jwt.sign({ sub: a.id, jti: a.keyId }, 'a-completely-different-secret', { algorithm: 'HS256' }),
      hs512: jwt.sign({ sub: a.id, jti: a.keyId }, JWT_SECRET, { algorithm: 'HS512' }),
      expiredExp: jwt.sign({ sub: a.id, jti: a.keyId, exp: now - 60 }, JWT_SECRET, { algorithm: 'HS256' }),
      expiredRow: shortLived.token,
      nbfFuture: jwt.sign({ sub: a.id, jti: a.keyId, nbf: now + 3600 }, JWT_SECRET, { algorithm: 'HS256' }),
      revoked: revoked.token,
      unknownKey: jwt.sign({ sub: a.id, jti: crypto.randomUUID() }, JWT_SECRET, { algorithm: 'HS256' }),
      subjectMismatch: jwt.sign({ sub: b.id, jti: a.keyId }, JWT_SECRET, { algorithm: 'HS256' }),
      noJti: jwt.sign({ sub: a.id }, JWT_SECRET, { algorithm: 'HS256' }),
      garbage: 'garbage',
      dots: '...',
      truncated: a.token.slice(0, -5),
    };
    for (const [kind, token] of Object.entries(bad)) {
      const r = await app.request('GET', '/api/v1/projects', { token });
      expect({ kind, status: r.status, body: r.body }).toEqual({ kind, status: 401, body: INVALID_TOKEN });
      expectNoLeak(r, [token]);
      const g = await app.request('POST', '/api/v1/graphql', { token, body: { query: '{ projects { id } }' } });
      expect({ kind, status: g.status, code: g.body?.errors?.[0]?.extensions?.code }).toEqual({ kind, status: 401, code: 'UNAUTHENTICATED' });
    }
    for (const header of ['', 'Bearer', 'Bearer ', `Basic ${Buffer.from('a:b').toString('base64')}`, `Bearer ${a.token} extra`, `Token ${a.token}`]) {
      const r = await app.request('GET', '/api/v1/keys', { headers: { Authorization: header } });
      expect({ header, status: r.status, body: r.body }).toEqual({ header, status: 401, body: INVALID_TOKEN });
    }
    // The real token still works, and the revoked key never comes back.
    expect((await app.request('GET', '/api/v1/projects', { token: a.token })).status).toBe(200);
    expect((await app.request('GET', '/api/v1/projects', { token: revoked.token })).status).toBe(401);
  });
});

describe('fuzz: malformed requests', () => {
  let app: TestApp;
  let user: TestUser;
  const maxBody = 256 * 1024;
  beforeAll(async () => {
    app = await startTestApp({ env: { MAX_BODY_BYTES: String(maxBody), RATE_LIMIT_REST_PER_HOUR: '100000', RATE_LIMIT_GRAPHQL_PER_HOUR: '100000' } });
    user = await app.createUser('fuzz');
    const ok = await app.request('PUT', `/api/v1/projects/fuzz-proj/sessions/${crypto.randomUUID()}`, {
      token: user.token,
      body: { name: 'n', markdown: 'm' },
    });
    expect(ok.status).toBe(201);
  });
  afterAll(async () => {
    await app.close();
  });

  const json = { 'Content-Type': 'application/json' };

  /** One request: any 4xx (or 2xx, for inputs that happen to be valid), never 5xx, never a leak. */
  async function probe(method: string, path: string, body?: unknown, headers: Record<string, string> = {}, expectStatus?: number) {
    const r = await app.request(method, path, { token: user.token, body, headers });
    const label = `${method} ${path} ${typeof body === 'string' ? body.slice(0, 60) : Buffer.isBuffer(body) ? `<${body.length} bytes>` : JSON.stringify(body)?.slice(0, 60)}`;
    if (expectStatus !== undefined) expect({ label, status: r.status }).toEqual({ label, status: expectStatus });
    // GraphQL reports resolver failures with HTTP 200: an INTERNAL_SERVER_ERROR code counts as a 5xx.
    const internal = r.status >= 500 || /"code":"INTERNAL_SERVER_ERROR"/.test(r.text);
    expect({ label, serverError: internal, text: internal ? r.text.slice(0, 300) : '' }).toEqual({ label, serverError: false, text: '' });
    expectNoLeak(r, [user.token]);
    return r;
  }

  it('answers the documented 4xx for broken bodies and encodings', async () => {
    const put = `/api/v1/projects/fuzz-proj/sessions/${crypto.randomUUID()}`;
    await probe('PUT', put, '{"name": "x", "markdown": ', json, 400);
    await probe('PUT', put, '', json);
    await probe('PUT', put, 'null', json, 400);
    await probe('PUT', put, '[]', json, 400);
    await probe('PUT', put, '"just a string"', json, 400);
    await probe('PUT', put, '{"name":"x","markdown":"y"}', { 'Content-Type': 'text/plain' }, 400);
    // Invalid UTF-8 inside a string.
    await probe('PUT', put, Buffer.from([0x7b, 0x22, 0x6e, 0x61, 0x6d, 0x65, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0xc3, 0x22, 0x7d]), json, 400);
    // Lone surrogate escapes are valid JSON; whatever the service decides, not a 5xx.
    await probe('PUT', put, '{"name":"\\ud800","markdown":"\\udfff"}', json);
    // gzip: garbage, truncated, and a declared-but-absent encoding.
    await probe('PUT', put, crypto.randomBytes(200), { ...json, 'Content-Encoding': 'gzip' }, 400);
    await probe('PUT', put, zlib.gzipSync(Buffer.from('{"name":"x","markdown":"y"}')).subarray(0, 15), { ...json, 'Content-Encoding': 'gzip' }, 400);
    await probe('PUT', put, '{"name":"x","markdown":"y"}', { ...json, 'Content-Encoding': 'gzip' }, 400);
    // Unsupported encodings.
    for (const enc of ['br', 'compress', 'deflate, br', 'x-unknown']) {
      await probe('PUT', put, '{"name":"x","markdown":"y"}', { ...json, 'Content-Encoding': enc }, 415);
    }
    // Oversized: plain, and a gzip bomb.
    await probe('PUT', put, { name: 'x', markdown: 'y'.repeat(maxBody + 10) }, {}, 413);
    await probe(
      'PUT',
      put,
      zlib.gzipSync(Buffer.from(`{"name":"x","markdown":"${'a'.repeat(8 * 1024 * 1024)}"}`)),
      { ...json, 'Content-Encoding': 'gzip' },
      413,
    );
  });

  it('survives 100k-deep nesting in bodies and GraphQL queries', async () => {
    const deep = '['.repeat(100_000) + ']'.repeat(100_000);
    await probe('PUT', `/api/v1/projects/fuzz-proj/sessions/${crypto.randomUUID()}`, deep, json);
    await probe('PUT', `/api/v1/projects/fuzz-proj/sessions/${crypto.randomUUID()}`, `{"name":"x","markdown":"y","metadata":{"tags":${deep}}}`, json);
    await probe('POST', '/api/v1/projects', `{"name":${'{"a":'.repeat(50_000)}1${'}'.repeat(50_000)}}`, json);
    const r = await probe('POST', '/api/v1/graphql', { query: `{ ${'projects { sessions { project { '.repeat(2000)} id ${'} } } '.repeat(2000)} }` });
    expect(r.status).toBeGreaterThanOrEqual(400);
    await probe('POST', '/api/v1/graphql', `{"query":"query($x: [Int]) { projects { id } }","variables":{"x":${deep}}}`, json);
    await probe('POST', '/api/v1/graphql', deep, json);
  });

  it('answers 4xx for wrong types, bad values and odd paths on every endpoint (seeded random pass)', async () => {
    const sid = crypto.randomUUID();
    const weird: unknown[] = [
      null,
      true,
      0,
      -1,
      1e309,
      1.5,
      'x'.repeat(70_000),
      '',
      ' ',
      '\u0000',
      '../../etc/passwd',
      '<script>alert(1)</script>',
      "'; DROP TABLE sessions; --",
      [],
      ['a', 1, null],
      {},
      { $gt: '' },
      { __proto__: { admin: true } },
      '\ud83d\ude00'.repeat(300),
    ];
    let seed = 42;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const pick = <T>(xs: T[]) => xs[rand(xs.length)];
    const shapes: Array<[string, string, string[]]> = [
      ['PUT', `/api/v1/projects/fuzz-proj/sessions/${sid}`, ['name', 'markdown', 'rawData', 'projectName', 'startedAt', 'endedAt', 'metadata']],
      ['PATCH', `/api/v1/projects/fuzz-proj/sessions/${sid}`, ['name', 'tags', 'userTitle']],
      ['POST', '/api/v1/projects', ['id', 'name', 'icon', 'color']],
      ['PATCH', '/api/v1/projects/fuzz-proj', ['name', 'icon', 'color']],
      ['POST', '/api/v1/keys', ['name', 'expiresInDays']],
    ];
    for (let i = 0; i < 150; i++) {
      const [method, path, fields] = pick(shapes);
      const body: Record<string, unknown> = {};
      for (const f of fields) if (rand(3)) body[f] = pick(weird);
      if (rand(4) === 0) body[pick(['__proto__', 'constructor', 'prototype', 'extra'])] = pick(weird);
      await probe(method, path, body);
    }
    const paths = [
      '/api/v1/projects/%00',
      `/api/v1/projects/${'a'.repeat(5000)}`,
      '/api/v1/projects/%E0%A4%A',
      '/api/v1/projects/..%2F..%2Fetc',
      `/api/v1/projects/fuzz-proj/sessions/${'f'.repeat(36)}`,
      '/api/v1/projects/fuzz-proj/sessions/%ZZ',
      '/api/v1/sessions/recent?limit=-1',
      '/api/v1/sessions/recent?limit=1e3',
      '/api/v1/sessions/recent?limit[]=1',
      '/api/v1/projects/fuzz-proj/sessions?cursor=%FF%FE',
      '/api/v1/projects/fuzz-proj/sessions?limit=0',
      '/api/v1/projects/fuzz-proj/sessions?cursor=' + 'A'.repeat(3000),
      '/api/v1/keys/%00',
      '/api/v1/projects?x=' + 'y'.repeat(7000),
    ];
    for (const p of paths) {
      for (const method of ['GET', 'DELETE', 'HEAD']) await probe(method, p);
    }
    // GraphQL: wrong variable types, garbage queries, odd shapes.
    for (const body of [
      { query: 'query($n: Int) { sessions(limit: $n) { id } }', variables: { n: 'ten' } },
      { query: 'query($n: Int) { sessions(limit: $n) { id } }', variables: { n: 1e309 } },
      { query: '{ project(id: 123) { id } }' },
      { query: 'mutation { createApiKey(name: "", expiresInDays: -5) { token } }' },
      { query: '{{{{' },
      { query: 42 },
      { query: null },
      { variables: {} },
      { query: '{ projects { id } }', operationName: 7 },
      { query: '{ projects { id } }', variables: 'nope' },
      [{ query: '{ projects { id } }' }],
    ]) {
      await probe('POST', '/api/v1/graphql', body);
    }
  });

  it('GraphQL: an operation type the schema lacks (subscription) is refused as a client error, not INTERNAL_SERVER_ERROR', async () => {
    const r = await probe('POST', '/api/v1/graphql', { query: 'subscription { x }' });
    expect(r.status).toBe(400);
    expect(r.body.errors[0].extensions.code).toBe('VALIDATION_ERROR');
  });

  it('is healthy afterwards', async () => {
    expect((await app.request('GET', '/healthz')).status).toBe(200);
    expect((await app.request('GET', '/readyz')).status).toBe(200);
    const list = await app.request('GET', '/api/v1/projects', { token: user.token });
    expect(list.status).toBe(200);
    expect(list.body.data.projects.map((p: any) => p.id)).toContain('fuzz-proj');
  });
});
