import { replicaCaughtUp } from '../support/replica-sync';
import { SID, startTestApp, type TestApp, type TestUser } from '../support/app';

let app: TestApp;
let a: TestUser;
let b: TestUser;

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const ETAG = /^W\/"[0-9a-f]+"$/;
const SESSION_KEYS = [
  'clientId',
  'createdAt',
  'endedAt',
  'etag',
  'id',
  'markdownSize',
  'metadata',
  'name',
  'projectId',
  'rawDataSize',
  'redactions',
  'sessionDataSize',
  'startedAt',
  'updatedAt',
  'uploadedBy',
  'userTitle',
];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeAll(async () => {
  app = await startTestApp();
  a = await app.createUser('a');
  b = await app.createUser('b');
});
afterAll(() => app.close());

const url = (p: string, s: string) => `/api/v1/projects/${p}/sessions/${s}`;
const get = (u: TestUser, p: string, s: string, headers?: Record<string, string>) => app.request('GET', url(p, s), { token: u.token, headers });

describe('PUT upsert', () => {
  test('201 on create then 200 on update, body and ETag header', async () => {
    const c = await app.put(a, 'up', SID(1), { name: 'first', markdown: 'one' });
    expect(c.status).toBe(201);
    expect(c.body.success).toBe(true);
    expect(Object.keys(c.body.data).sort()).toEqual(['createdAt', 'etag', 'projectId', 'sessionId', 'updatedAt']);
    expect(c.body.data).toMatchObject({ sessionId: SID(1), projectId: 'up' });
    expect(c.body.data.createdAt).toMatch(ISO);
    expect(c.body.data.etag).toMatch(ETAG);
    expect(c.headers.etag).toBe(c.body.data.etag);
    await sleep(5);
    const u = await app.put(a, 'up', SID(1), { name: 'first', markdown: 'two' });
    expect(u.status).toBe(200);
    expect(u.body.data.createdAt).toBe(c.body.data.createdAt);
    expect(u.body.data.etag).not.toBe(c.body.data.etag);
    expect(u.body.data.updatedAt > c.body.data.updatedAt).toBe(true);
    expect(u.headers.etag).toBe(u.body.data.etag);
  });

  test('identical re-PUT → 200, same etag, same updatedAt', async () => {
    const body = { name: 'same', markdown: 'x', rawData: 'r', startedAt: '2024-01-15T10:30:00.000Z', metadata: { tags: ['t'] } };
    const first = await app.put(a, 'up', SID(2), body);
    await sleep(5);
    const again = await app.put(a, 'up', SID(2), body);
    expect(again.status).toBe(200);
    expect(again.body.data.etag).toBe(first.body.data.etag);
    expect(again.body.data.updatedAt).toBe(first.body.data.updatedAt);
    // Without startedAt/endedAt: kept from the stored values, still a no-op.
    const { startedAt: _s, ...noDates } = body;
    const third = await app.put(a, 'up', SID(2), noDates);
    expect(third.body.data).toEqual(first.body.data);
  });

  test('etag changes with each readable field', async () => {
    const base = {
      name: 'n',
      markdown: 'm',
      rawData: 'r',
      startedAt: '2024-01-01T00:00:00.000Z',
      endedAt: '2024-01-02T00:00:00.000Z',
      metadata: { clientName: 'c' },
    };
    const e0 = (await app.put(a, 'up', SID(3), base)).body.data.etag;
    const variants = [
      { ...base, name: 'n2' },
      { ...base, rawData: 'r2' },
      { ...base, startedAt: '2024-01-01T00:00:01.000Z' },
      { ...base, endedAt: '2024-01-02T00:00:01.000Z' },
      { ...base, metadata: { clientName: 'd' } },
      { ...base, metadata: { clientName: 'c', title: 't' } },
    ];
    const seen = new Set([e0]);
    for (const v of variants) {
      const e = (await app.put(a, 'up', SID(3), v)).body.data.etag;
      expect(seen.has(e)).toBe(false);
      seen.add(e);
    }
  });

  test('If-Match mismatch → 412, match → 200; If-None-Match: * on existing → 412, on new → 201', async () => {
    const c = await app.put(a, 'up', SID(4));
    const bad = await app.put(a, 'up', SID(4), { name: 's', markdown: 'changed' }, { 'If-Match': 'W/"0000"' });
    expect(bad).toMatchObject({ status: 412, body: { success: false, error: 'Precondition failed' } });
    expect((await get(a, 'up', SID(4))).body.data.session.markdownContent).toBe('# m');
    const good = await app.put(a, 'up', SID(4), { name: 's', markdown: 'changed' }, { 'If-Match': c.body.data.etag });
    expect(good.status).toBe(200);
    const inm = await app.put(a, 'up', SID(4), { name: 's', markdown: 'again' }, { 'If-None-Match': '*' });
    expect(inm).toMatchObject({ status: 412, body: { success: false, error: 'Precondition failed' } });
    const fresh = await app.put(a, 'up', SID(5), { name: 's', markdown: 'new' }, { 'If-None-Match': '*' });
    expect(fresh.status).toBe(201);
    const ifMatchNew = await app.put(a, 'up', SID(6), { name: 's', markdown: 'new' }, { 'If-Match': '"x"' });
    expect(ifMatchNew.status).toBe(412);
  });

  test('projectName used on create only; unknown top-level fields ignored; path wins', async () => {
    const c = await app.put(a, 'named-proj', SID(1), {
      name: 's',
      markdown: 'm',
      projectName: 'Nice Name',
      projectId: 'other',
      clientState: { x: 1 },
      id: SID(9),
    });
    expect(c.status).toBe(201);
    expect(c.body.data).toMatchObject({ projectId: 'named-proj', sessionId: SID(1) });
    expect((await app.request('GET', '/api/v1/projects/named-proj', { token: a.token })).body.data.project).toMatchObject({
      name: 'Nice Name',
      icon: 'Code2',
      color: 'blue',
    });
    await app.put(a, 'named-proj', SID(2), { name: 's', markdown: 'm', projectName: 'Other Name' });
    expect((await app.request('GET', '/api/v1/projects/named-proj', { token: a.token })).body.data.project.name).toBe('Nice Name');
    expect((await app.request('GET', '/api/v1/projects/other', { token: a.token })).status).toBe(404);
    await app.put(a, 'no-name-proj', SID(1));
    expect((await app.request('GET', '/api/v1/projects/no-name-proj', { token: a.token })).body.data.project.name).toBe('no-name-proj');
  });

  test('startedAt/endedAt default to upload time on create and are kept on update', async () => {
    const c = await app.put(a, 'dates', SID(1));
    const s1 = (await get(a, 'dates', SID(1))).body.data.session;
    expect(s1.startedAt).toBe(c.body.data.createdAt);
    expect(s1.endedAt).toBe(c.body.data.createdAt);
    await sleep(5);
    await app.put(a, 'dates', SID(1), { name: 's', markdown: 'changed' });
    const s2 = (await get(a, 'dates', SID(1))).body.data.session;
    expect(s2.startedAt).toBe(s1.startedAt);
    expect(s2.endedAt).toBe(s1.endedAt);
    expect(s2.updatedAt > s1.updatedAt).toBe(true);
    await app.put(a, 'dates', SID(1), { name: 's', markdown: 'changed', startedAt: '2020-05-05T05:05:05.555Z', endedAt: '2020-05-05T06:00:00Z' });
    const s3 = (await get(a, 'dates', SID(1))).body.data.session;
    expect(s3.startedAt).toBe('2020-05-05T05:05:05.555Z');
    expect(s3.endedAt).toBe('2020-05-05T06:00:00.000Z');
  });

  test('metadata: documented fields null/[] when absent; extra string keys kept', async () => {
    await app.put(a, 'meta', SID(1), { name: 's', markdown: 'm' });
    expect((await get(a, 'meta', SID(1))).body.data.session.metadata).toEqual({
      clientName: null,
      clientVersion: null,
      agentName: null,
      deviceId: null,
      gitBranches: [],
      llmModels: [],
      tags: [],
    });
    const meta = {
      clientName: 'cli',
      clientVersion: '1.2.3',
      agentName: 'claude',
      deviceId: 'dev-1',
      gitBranches: ['main', 'feat/x'],
      llmModels: ['m1'],
      tags: ['b', 'a'],
      machineName: 'box',
      title: 'T',
      summary: 'S',
    };
    await app.put(a, 'meta', SID(2), { name: 's', markdown: 'm', metadata: meta });
    expect((await get(a, 'meta', SID(2))).body.data.session.metadata).toEqual(meta);
    const list = await app.request('GET', '/api/v1/projects/meta/sessions', { token: a.token });
    expect(list.body.data.sessions.find((s: any) => s.id === SID(2)).metadata).toEqual(meta);
  });

  test('metadata limits: 32 extra keys ok, 33 → 400; non-string → 400; >1 KiB → 400', async () => {
    const keys = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, 'v']));
    expect((await app.put(a, 'meta', SID(3), { name: 's', markdown: 'm', metadata: keys(32) })).status).toBe(201);
    const over = await app.put(a, 'meta', SID(4), { name: 's', markdown: 'm', metadata: keys(33) });
    expect(over.status).toBe(400);
    expect(over.body.success).toBe(false);
    for (const bad of [{ x: 1 }, { x: { y: 'z' } }, { x: ['a'] }, { x: true }, { x: 'é'.repeat(513) }]) {
      const r = await app.put(a, 'meta', SID(4), { name: 's', markdown: 'm', metadata: bad });
      expect(r.status).toBe(400);
    }
    expect((await app.put(a, 'meta', SID(4), { name: 's', markdown: 'm', metadata: { x: 'y'.repeat(1024) } })).status).toBe(201);
    expect((await app.put(a, 'meta', SID(5), { name: 's', markdown: 'm', metadata: { tags: 'notarray' } })).status).toBe(400);
    expect((await app.put(a, 'meta', SID(5), { name: 's', markdown: 'm', metadata: 'str' })).status).toBe(400);
    expect((await get(a, 'meta', SID(5))).status).toBe(404);
  });

  test('NUL characters kept in name, markdown, raw, metadata and userTitle; a __proto__ extra key is kept', async () => {
    const U = 'ABCDEF01-2345-4678-89AB-CDEF0123AAAA';
    const raw = JSON.stringify({
      name: 'a\u0000b',
      markdown: 'm\u0000',
      rawData: '\u0000',
      metadata: { tags: ['t\u0000x'], clientName: 'c\u0000', PROTO: 'y', title: 'x\u0000y' },
    }).replace('"PROTO"', '"__proto__"');
    expect((await app.put(a, 'nul', U, raw, { 'Content-Type': 'application/json' })).status).toBe(201);
    const g = await get(a, 'nul', U);
    const s = g.body.data.session;
    expect(s).toMatchObject({ name: 'a\u0000b', markdownContent: 'm\u0000', markdownSize: 2, rawDataSize: 1 });
    expect(s.metadata).toMatchObject({ tags: ['t\u0000x'], clientName: 'c\u0000', title: 'x\u0000y' });
    expect(Object.prototype.hasOwnProperty.call(s.metadata, '__proto__')).toBe(true);
    expect(g.text).toContain('"__proto__":"y"');
    const p = await app.request('PATCH', url('nul', U), { token: a.token, body: { userTitle: 'u\u0000' } });
    expect(p.body.data.session.userTitle).toBe('u\u0000');
    // Upper-case id on every route.
    expect((await app.request('HEAD', url('nul', U), { token: a.token })).status).toBe(200);
    expect((await app.request('GET', url('nul', U) + '/raw', { token: a.token })).text).toBe('\u0000');
    expect((await app.request('DELETE', url('nul', U), { token: a.token })).status).toBe(200);
    expect((await get(a, 'nul', U.toLowerCase())).status).toBe(404);
  });

  test('documented metadata fields: wrong type or over 255 characters → 400', async () => {
    for (const metadata of [{ clientName: 5 }, { clientName: 'x'.repeat(256) }, { deviceId: ['a'] }, { llmModels: [1] }, { gitBranches: ['x'.repeat(256)] }]) {
      const r = await app.put(a, 'meta-doc', SID(1), { name: 's', markdown: 'm', metadata });
      expect([metadata, r.status]).toEqual([metadata, 400]);
    }
    expect((await app.request('GET', '/api/v1/projects/meta-doc', { token: a.token })).status).toBe(404);
  });

  test('session id: non-UUID → 400 on PUT, 404 on reads and deletes; upper case accepted, stored lower-case', async () => {
    const r = await app.put(a, 'ids', 'not-a-uuid');
    expect(r.status).toBe(400);
    expect(r.body.success).toBe(false);
    for (const [m, suffix] of [
      ['GET', ''],
      ['GET', '/raw'],
      ['DELETE', ''],
      ['PATCH', ''],
    ] as const) {
      const res = await app.request(m, url('ids', 'not-a-uuid') + suffix, { token: a.token, body: m === 'PATCH' ? { name: 'x' } : undefined });
      expect(res.status).toBe(404);
    }
    expect((await app.request('HEAD', url('ids', 'not-a-uuid'), { token: a.token })).status).toBe(404);
    const upper = 'ABCDEF01-2345-4678-89AB-CDEF01234567';
    const c = await app.put(a, 'ids', upper);
    expect(c.status).toBe(201);
    expect(c.body.data.sessionId).toBe(upper.toLowerCase());
    expect((await get(a, 'ids', upper)).body.data.session.id).toBe(upper.toLowerCase());
    expect((await get(a, 'ids', upper.toLowerCase())).status).toBe(200);
    expect((await app.put(a, 'ids', upper.toLowerCase())).status).toBe(200);
    const list = await app.request('GET', '/api/v1/projects/ids/sessions', { token: a.token });
    expect(list.body.data.sessions.map((s: any) => s.id)).toEqual([upper.toLowerCase()]);
  });

  test('bad project id → 400 on PUT, 404 on reads', async () => {
    expect((await app.put(a, '-bad', SID(1))).status).toBe(400);
    expect((await get(a, '-bad', SID(1))).status).toBe(404);
    expect((await app.request('GET', '/api/v1/projects/-bad/sessions', { token: a.token })).status).toBe(404);
    expect((await app.request('GET', '/api/v1/projects/-bad/sessions/sizes', { token: a.token })).status).toBe(404);
  });

  test('name: 1–255 code points (emoji count 1), missing → 400 Missing required field: name', async () => {
    expect((await app.put(a, 'names', SID(1), { name: '😀'.repeat(255), markdown: 'm' })).status).toBe(201);
    expect((await get(a, 'names', SID(1))).body.data.session.name).toBe('😀'.repeat(255));
    expect((await app.put(a, 'names', SID(2), { name: 'x'.repeat(256), markdown: 'm' })).status).toBe(400);
    expect((await app.put(a, 'names', SID(2), { name: '', markdown: 'm' })).status).toBe(400);
    expect((await app.put(a, 'names', SID(2), { name: 5, markdown: 'm' })).status).toBe(400);
    expect(await app.put(a, 'names', SID(2), { markdown: 'm' })).toMatchObject({
      status: 400,
      body: { success: false, error: 'Missing required field: name' },
    });
  });

  test('markdown: empty → 400, missing → 400, non-string → 400; rawData non-string → 400', async () => {
    expect((await app.put(a, 'md', SID(1), { name: 's', markdown: '' })).status).toBe(400);
    expect((await app.put(a, 'md', SID(1), { name: 's' })).status).toBe(400);
    expect((await app.put(a, 'md', SID(1), { name: 's', markdown: 7 })).status).toBe(400);
    expect((await app.put(a, 'md', SID(1), { name: 's', markdown: 'm', rawData: { a: 1 } })).status).toBe(400);
    expect((await app.put(a, 'md', SID(1), { name: 's', markdown: 'm', startedAt: 'yesterday' })).status).toBe(400);
    expect((await app.request('GET', '/api/v1/projects/md', { token: a.token })).status).toBe(404);
  });

  test("another user's project → 403, nothing written", async () => {
    await app.put(a, 'owned', SID(1), { name: 'mine', markdown: 'orig' });
    const r = await app.put(b, 'owned', SID(1), { name: 'theirs', markdown: 'evil' });
    // Teams: the 403 of an upload into another account's project says how to fix it.
    expect(r).toMatchObject({ status: 403, body: { success: false, error: expect.stringMatching(/^Project owned belongs to another account\. /) } });
    expect((await app.put(b, 'owned', SID(2))).status).toBe(403);
    const s = (await get(a, 'owned', SID(1))).body.data.session;
    expect(s).toMatchObject({ name: 'mine', markdownContent: 'orig' });
    expect((await app.request('GET', '/api/v1/projects/owned/sessions', { token: a.token })).body.data.total).toBe(1);
  });
});

describe('GET session', () => {
  let etag: string;
  const md = '# Title\n\nhéllo 😀 世界\n';
  beforeAll(async () => {
    await app.request('POST', '/api/v1/projects', { token: a.token, body: { id: 'rd', name: 'Read', icon: 'Brain', color: 'emerald' } });
    const r = await app.put(a, 'rd', SID(1), { name: 'read me', markdown: md, rawData: '{"raw":true}', metadata: { tags: ['x'] } });
    etag = r.body.data.etag;
  });

  test('JSON: every field, markdownContent, project, etag equals ETag; validators', async () => {
    const r = await get(a, 'rd', SID(1));
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toMatch(/^application\/json/);
    const s = r.body.data.session;
    expect(Object.keys(s).sort()).toEqual([...SESSION_KEYS, 'usage', 'markdownContent', 'project'].sort());
    expect(s).toMatchObject({
      id: SID(1),
      projectId: 'rd',
      name: 'read me',
      userTitle: null,
      // A raw log recording no token usage.
      usage: null,
      markdownContent: md,
      markdownSize: Buffer.byteLength(md),
      rawDataSize: 12,
      etag,
      project: { id: 'rd', name: 'Read', icon: 'Brain', color: 'emerald' },
    });
    expect(Object.keys(s.project).sort()).toEqual(['color', 'icon', 'id', 'name', 'owner']);
    for (const k of ['createdAt', 'updatedAt', 'startedAt', 'endedAt']) expect(s[k]).toMatch(ISO);
    expect(r.headers.etag).toBe(etag);
    expect(r.headers['last-modified']).toBe(new Date(s.updatedAt).toUTCString());
    expect(r.headers['x-markdown-size']).toBe(String(Buffer.byteLength(md)));
    expect(r.headers['x-raw-data-size']).toBe('12');
  });

  test('Accept: text/markdown → exact bytes', async () => {
    const r = await get(a, 'rd', SID(1), { Accept: 'text/markdown' });
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('text/markdown; charset=utf-8');
    expect(r.raw.equals(Buffer.from(md, 'utf8'))).toBe(true);
    expect(r.headers.etag).toBe(etag);
    expect(r.headers['x-markdown-size']).toBe(String(Buffer.byteLength(md)));
    expect(r.headers['x-raw-data-size']).toBe('12');
    expect(r.headers['last-modified']).toBeDefined();
    // JSON, markdown and session data share the URL and the ETag: caches must key on Accept.
    expect(String(r.headers.vary)).toMatch(/\bAccept\b/);
    const json = await get(a, 'rd', SID(1), { Accept: 'application/json' });
    expect(String(json.headers.vary)).toMatch(/\bAccept\b/);
  });

  test.each([
    ['exact', (e: string) => e],
    ['strong form (weak comparison)', (e: string) => e.slice(2)],
    ['list', (e: string) => `W/"nope", ${e}`],
    ['star', () => '*'],
  ])('304 on If-None-Match %s (JSON, markdown, raw, HEAD)', async (_n, f) => {
    for (const [method, suffix, accept] of [
      ['GET', '', 'application/json'],
      ['GET', '', 'text/markdown'],
      ['GET', '/raw', '*/*'],
      ['HEAD', '', '*/*'],
    ]) {
      const r = await app.request(method, url('rd', SID(1)) + suffix, { token: a.token, headers: { 'If-None-Match': f(etag), Accept: accept } });
      expect(r.status).toBe(304);
      expect(r.headers.etag).toBe(etag);
      expect(r.raw.length).toBe(0);
    }
  });

  test('non-matching If-None-Match → 200', async () => {
    const r = await get(a, 'rd', SID(1), { 'If-None-Match': 'W/"0123"' });
    expect(r.status).toBe(200);
    expect(r.body.data.session.markdownContent).toBe(md);
  });

  test('HEAD: validators, Content-Length = markdownSize, no body', async () => {
    const r = await app.request('HEAD', url('rd', SID(1)), { token: a.token });
    expect(r.status).toBe(200);
    expect(r.headers.etag).toBe(etag);
    expect(r.headers['content-length']).toBe(String(Buffer.byteLength(md)));
    expect(r.headers['x-markdown-size']).toBe(String(Buffer.byteLength(md)));
    expect(r.headers['x-raw-data-size']).toBe('12');
    expect(r.headers['last-modified']).toMatch(/GMT$/);
    expect(r.raw.length).toBe(0);
  });

  test('HEAD 401/403/404 with no body', async () => {
    const cases: Array<[string, string | undefined, number]> = [
      [url('rd', SID(1)), undefined, 401],
      [url('rd', SID(1)), 'garbage', 401],
      [url('rd', SID(1)), b.token, 403],
      [url('rd', SID(99)), a.token, 404],
      [url('nope', SID(1)), a.token, 404],
    ];
    for (const [u, token, status] of cases) {
      const r = await app.request('HEAD', u, { token });
      expect(r.status).toBe(status);
      expect(r.raw.length).toBe(0);
      expect(r.headers.etag).toBeUndefined();
    }
  });

  test('/raw: byte-exact octet-stream; empty when uploaded without raw data', async () => {
    const r = await app.request('GET', url('rd', SID(1)) + '/raw', { token: a.token });
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('application/octet-stream');
    expect(r.text).toBe('{"raw":true}');
    expect(r.headers.etag).toBe(etag);
    await app.put(a, 'rd', SID(2), { name: 'noraw', markdown: 'm' });
    const e = await app.request('GET', url('rd', SID(2)) + '/raw', { token: a.token });
    expect(e.status).toBe(200);
    expect(e.raw.length).toBe(0);
    expect(e.headers['x-raw-data-size']).toBe('0');
    expect((await get(a, 'rd', SID(2))).body.data.session.rawDataSize).toBe(0);
  });

  test('session under a different project → 404; unknown session → 404 Session not found', async () => {
    await app.put(a, 'rd-other', SID(7));
    expect(await get(a, 'rd', SID(7))).toMatchObject({ status: 404, body: { success: false, error: 'Session not found' } });
    expect(await get(a, 'rd', SID(8))).toMatchObject({ status: 404, body: { error: 'Session not found' } });
    expect(await get(a, 'zz', SID(8))).toMatchObject({ status: 404, body: { error: 'Project not found' } });
    expect((await app.request('GET', url('rd', SID(7)) + '/raw', { token: a.token })).status).toBe(404);
  });
});

describe('lists', () => {
  const P = 'listp';
  const ids: string[] = [];
  beforeAll(async () => {
    for (let i = 1; i <= 7; i++) {
      await app.put(a, P, SID(i), { name: `s${i}`, markdown: 'x'.repeat(i), rawData: 'raw' });
      ids.push(SID(i));
      await sleep(3);
    }
    // Touch s2: now the most recently updated.
    await app.put(a, P, SID(2), { name: 's2', markdown: 'yy' });
  });
  const expectedOrder = () => [SID(2), SID(7), SID(6), SID(5), SID(4), SID(3), SID(1)];

  test('GET /projects/{id}/sessions: order, fields, total, projectId, nextCursor null, etag matches', async () => {
    const r = await app.request('GET', `/api/v1/projects/${P}/sessions`, { token: a.token });
    expect(r.status).toBe(200);
    expect(Object.keys(r.body.data).sort()).toEqual(['nextCursor', 'projectId', 'sessions', 'total']);
    expect(r.body.data).toMatchObject({ total: 7, projectId: P, nextCursor: null });
    expect(r.body.data.sessions.map((s: any) => s.id)).toEqual(expectedOrder());
    for (const s of r.body.data.sessions) {
      expect(Object.keys(s).sort()).toEqual(SESSION_KEYS);
      expect(s.markdownContent).toBeUndefined();
    }
    const one = await get(a, P, SID(5));
    expect(r.body.data.sessions.find((s: any) => s.id === SID(5)).etag).toBe(one.headers.etag);
  });

  test('cursor paging covers every session once', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const q: string = `?limit=3${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
      const r = await app.request('GET', `/api/v1/projects/${P}/sessions${q}`, { token: a.token });
      expect(r.status).toBe(200);
      expect(r.body.data.total).toBe(7);
      expect(r.body.data.sessions.length).toBeLessThanOrEqual(3);
      seen.push(...r.body.data.sessions.map((s: any) => s.id));
      cursor = r.body.data.nextCursor;
      pages++;
    } while (cursor && pages < 10);
    expect(pages).toBe(3);
    expect(seen).toEqual(expectedOrder());
  });

  test('limit bounds and bad cursor → 400', async () => {
    for (const q of [
      'limit=0',
      'limit=1001',
      'limit=abc',
      'limit=',
      'limit=1.5',
      'limit=-1',
      'cursor=%21%21notbase64',
      'cursor=',
      `cursor=${Buffer.from('["x"]').toString('base64url')}`,
    ]) {
      const r = await app.request('GET', `/api/v1/projects/${P}/sessions?${q}`, { token: a.token });
      expect([q, r.status]).toEqual([q, 400]);
      expect(r.body.success).toBe(false);
    }
    expect((await app.request('GET', `/api/v1/projects/${P}/sessions?limit=1000`, { token: a.token })).status).toBe(200);
    const one = await app.request('GET', `/api/v1/projects/${P}/sessions?limit=1`, { token: a.token });
    expect(one.body.data.sessions.length).toBe(1);
    expect(one.body.data.nextCursor).toEqual(expect.any(String));
  });

  test('default limit is 200', async () => {
    const u = await app.createUser('many');
    const p = 'manyp';
    const values: unknown[] = [];
    const now = new Date();
    await app.put(u, p, SID(0));
    for (let i = 1; i <= 204; i++) {
      values.push(p, SID(i), u.id, `s${i}`, 1, 0, 'W/"x"', 'd'.repeat(64), now, new Date(now.getTime() - i), now, now, '{}');
    }
    await app.deps.db.pool.query(
      `INSERT INTO sessions (projectId, id, userId, name, markdownSize, rawDataSize, etag, contentDigest, createdAt, updatedAt, startedAt, endedAt, metadataJson)
       VALUES ${Array(204).fill('(?,?,?,?,?,?,?,?,?,?,?,?,?)').join(',')}`,
      values,
    );
    await replicaCaughtUp(app.deps.db);
    const r = await app.request('GET', `/api/v1/projects/${p}/sessions`, { token: u.token });
    expect(r.body.data.total).toBe(205);
    expect(r.body.data.sessions.length).toBe(200);
    expect(r.body.data.nextCursor).not.toBeNull();
    const r2 = await app.request('GET', `/api/v1/projects/${p}/sessions?cursor=${encodeURIComponent(r.body.data.nextCursor)}`, { token: u.token });
    expect(r2.body.data.sessions.length).toBe(5);
    expect(r2.body.data.nextCursor).toBeNull();
  });

  test('list: unknown project → 404, other user → 403', async () => {
    expect((await app.request('GET', '/api/v1/projects/unknown-p/sessions', { token: a.token })).status).toBe(404);
    expect(await app.request('GET', `/api/v1/projects/${P}/sessions`, { token: b.token })).toMatchObject({
      status: 403,
      body: { error: 'Insufficient permissions' },
    });
    expect(await app.request('GET', `/api/v1/projects/${P}/sessions/sizes`, { token: b.token })).toMatchObject({
      status: 403,
      body: { error: 'Insufficient permissions' },
    });
  });

  test('sizes: {sessionId: markdownSize}', async () => {
    const r = await app.request('GET', `/api/v1/projects/${P}/sessions/sizes`, { token: a.token });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      success: true,
      data: { sessions: { [SID(1)]: 1, [SID(2)]: 2, [SID(3)]: 3, [SID(4)]: 4, [SID(5)]: 5, [SID(6)]: 6, [SID(7)]: 7 } },
    });
    // A project not created yet: empty, not 404 (the upload CLI asks before its first sync).
    expect(await app.request('GET', '/api/v1/projects/nope-p/sessions/sizes', { token: a.token })).toMatchObject({
      status: 200,
      body: { success: true, data: { sessions: {} } },
    });
  });

  test('recent: default 5, across projects, newest first, no etag, total = returned', async () => {
    const u = await app.createUser('recent');
    const order: string[] = [];
    for (let i = 1; i <= 7; i++) {
      await app.put(u, i % 2 ? 'rp1' : 'rp2', SID(i));
      order.unshift(SID(i));
      await sleep(3);
    }
    const r = await app.request('GET', '/api/v1/sessions/recent', { token: u.token });
    expect(r.status).toBe(200);
    expect(r.body.data.total).toBe(5);
    expect(r.body.data.sessions.map((s: any) => s.id)).toEqual(order.slice(0, 5));
    expect(r.body.data.sessions.map((s: any) => s.projectId)).toEqual(['rp1', 'rp2', 'rp1', 'rp2', 'rp1']);
    for (const s of r.body.data.sessions) {
      expect(s.etag).toBeUndefined();
      expect(s.markdownContent).toBeUndefined();
      expect(Object.keys(s).sort()).toEqual(SESSION_KEYS.filter((k) => k !== 'etag'));
    }
    const r2 = await app.request('GET', '/api/v1/sessions/recent?limit=100', { token: u.token });
    expect(r2.body.data.total).toBe(7);
    expect(r2.body.data.sessions.length).toBe(7);
    const r1 = await app.request('GET', '/api/v1/sessions/recent?limit=1', { token: u.token });
    expect(r1.body.data.sessions.map((s: any) => s.id)).toEqual([SID(7)]);
    // Only the caller's sessions.
    const rb = await app.request('GET', '/api/v1/sessions/recent?limit=100', { token: b.token });
    expect(rb.body.data.sessions.every((s: any) => !['rp1', 'rp2'].includes(s.projectId))).toBe(true);
  });

  test('recent: bad limits → 400', async () => {
    for (const q of ['limit=', 'limit=0', 'limit=101', 'limit=abc', 'limit=2.5', 'limit=-3']) {
      const r = await app.request('GET', `/api/v1/sessions/recent?${q}`, { token: a.token });
      expect([q, r.status]).toEqual([q, 400]);
      expect(r.body.success).toBe(false);
    }
  });
});

describe('PATCH and DELETE session', () => {
  test('PATCH name, tags, userTitle: updatedAt and etag change; response has session', async () => {
    const c = await app.put(a, 'pt', SID(1), { name: 'orig', markdown: 'm', metadata: { tags: ['a'], llmModels: ['x'] } });
    await sleep(3);
    const r = await app.request('PATCH', url('pt', SID(1)), { token: a.token, body: { name: 'new', tags: ['b', 'c'], userTitle: 'My title' } });
    expect(r.status).toBe(200);
    const s = r.body.data.session;
    expect(s).toMatchObject({ id: SID(1), name: 'new', userTitle: 'My title' });
    expect(s.metadata.tags).toEqual(['b', 'c']);
    expect(s.metadata.llmModels).toEqual(['x']);
    expect(s.etag).not.toBe(c.body.data.etag);
    expect(s.updatedAt > c.body.data.updatedAt).toBe(true);
    expect(r.headers.etag).toBe(s.etag);
    const g = await get(a, 'pt', SID(1));
    expect(g.body.data.session).toMatchObject({ name: 'new', userTitle: 'My title', etag: s.etag, updatedAt: s.updatedAt, markdownContent: 'm' });
    const t = await app.request('PATCH', url('pt', SID(1)), { token: a.token, body: { userTitle: null } });
    expect(t.body.data.session.userTitle).toBeNull();
    expect(t.body.data.session.etag).not.toBe(s.etag);
    // A re-PUT keeps userTitle (not part of upload).
    await app.request('PATCH', url('pt', SID(1)), { token: a.token, body: { userTitle: 'kept' } });
    await app.put(a, 'pt', SID(1), { name: 'new', markdown: 'm2' });
    expect((await get(a, 'pt', SID(1))).body.data.session.userTitle).toBe('kept');
  });

  test('PATCH errors: empty → 400, bad types → 400, unknown → 404, other user → 403', async () => {
    await app.put(a, 'pt', SID(2));
    expect((await app.request('PATCH', url('pt', SID(2)), { token: a.token, body: {} })).status).toBe(400);
    expect((await app.request('PATCH', url('pt', SID(2)), { token: a.token, body: { name: '' } })).status).toBe(400);
    expect((await app.request('PATCH', url('pt', SID(2)), { token: a.token, body: { tags: 'x' } })).status).toBe(400);
    expect((await app.request('PATCH', url('pt', SID(2)), { token: a.token, body: { userTitle: 5 } })).status).toBe(400);
    expect((await app.request('PATCH', url('pt', SID(3)), { token: a.token, body: { name: 'x' } })).status).toBe(404);
    expect(await app.request('PATCH', url('pt', SID(2)), { token: b.token, body: { name: 'x' } })).toMatchObject({
      status: 403,
      body: { error: 'Insufficient permissions' },
    });
    expect((await get(a, 'pt', SID(2))).body.data.session.name).toBe('s');
  });

  test('DELETE → {success:true, data:{success:true}}, then 404', async () => {
    await app.put(a, 'dl', SID(1), { name: 's', markdown: 'm', rawData: 'r', metadata: { tags: ['t'] } });
    await app.put(a, 'dl', SID(2));
    expect(await app.request('DELETE', url('dl', SID(1)), { token: b.token })).toMatchObject({
      status: 403,
      body: { success: false, error: 'Insufficient permissions' },
    });
    const r = await app.request('DELETE', url('dl', SID(1)), { token: a.token });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ success: true, data: { success: true } });
    expect((await get(a, 'dl', SID(1))).status).toBe(404);
    expect((await app.request('DELETE', url('dl', SID(1)), { token: a.token })).status).toBe(404);
    const [c] = await app.deps.db.pool.query('SELECT COUNT(*) AS n FROM session_chunks WHERE projectId = ? AND sessionId = ?', ['dl', SID(1)]);
    expect(Number(c.n)).toBe(0);
    expect((await app.request('GET', '/api/v1/projects/dl/sessions', { token: a.token })).body.data.total).toBe(1);
  });
});
