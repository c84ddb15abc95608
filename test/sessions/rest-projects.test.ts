import { SID, startTestApp, type TestApp, type TestUser } from '../support/app';

let app: TestApp;
let a: TestUser;
let b: TestUser;

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const PROJECT_KEYS = [
  'color',
  'createdAt',
  'icon',
  'id',
  'lastActivity',
  'lastUpdated',
  'legalHold',
  'name',
  'owner',
  'ownerId',
  'retentionDays',
  'sessionCount',
  'totalMarkdownSize',
  'updatedAt',
];

beforeAll(async () => {
  app = await startTestApp();
  a = await app.createUser('a');
  b = await app.createUser('b');
});
afterAll(() => app.close());

describe('POST /api/v1/projects', () => {
  test('creates with defaults and returns the full project', async () => {
    const r = await app.request('POST', '/api/v1/projects', { token: a.token, body: { id: '833c-d926-f753-7b4a', name: 'Mine' } });
    expect(r.status).toBe(201);
    expect(r.body.success).toBe(true);
    const p = r.body.data.project;
    expect(Object.keys(p).sort()).toEqual(PROJECT_KEYS);
    expect(p).toMatchObject({ id: '833c-d926-f753-7b4a', ownerId: a.id, name: 'Mine', icon: 'Code2', color: 'blue', sessionCount: 0, totalMarkdownSize: 0 });
    expect(p.createdAt).toMatch(ISO);
    expect(p.updatedAt).toMatch(ISO);
    expect(p.lastActivity).toBe(p.updatedAt);
  });

  test('server-generated id when none given; icon and color kept', async () => {
    const r = await app.request('POST', '/api/v1/projects', { token: a.token, body: { name: 'Gen', icon: 'Rocket', color: 'rose' } });
    expect(r.status).toBe(201);
    expect(r.body.data.project.id).toMatch(/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/);
    expect(r.body.data.project).toMatchObject({ icon: 'Rocket', color: 'rose' });
  });

  test("409 for own id, 403 for another user's", async () => {
    await app.request('POST', '/api/v1/projects', { token: a.token, body: { id: 'dup-proj', name: 'x' } });
    const again = await app.request('POST', '/api/v1/projects', { token: a.token, body: { id: 'dup-proj', name: 'y' } });
    expect(again.status).toBe(409);
    expect(again.body.success).toBe(false);
    expect(typeof again.body.error).toBe('string');
    const other = await app.request('POST', '/api/v1/projects', { token: b.token, body: { id: 'dup-proj', name: 'z' } });
    expect(other.status).toBe(403);
    expect(other.body).toEqual({ success: false, error: 'Insufficient permissions' });
    const still = await app.request('GET', '/api/v1/projects/dup-proj', { token: a.token });
    expect(still.body.data.project.name).toBe('x');
  });

  test.each([[{ id: '-bad', name: 'x' }], [{ id: 'has space', name: 'x' }], [{ id: 'a'.repeat(129), name: 'x' }], [{ id: 42, name: 'x' }]])(
    'bad id → 400 %#',
    async (body) => {
      const r = await app.request('POST', '/api/v1/projects', { token: a.token, body });
      expect(r.status).toBe(400);
      expect(r.body.success).toBe(false);
    },
  );

  test('id of 128 characters accepted', async () => {
    const id = 'A' + 'b'.repeat(127);
    const r = await app.request('POST', '/api/v1/projects', { token: a.token, body: { id, name: 'x' } });
    expect(r.status).toBe(201);
    expect(r.body.data.project.id).toBe(id);
  });

  test('missing name → 400 Missing required field: name', async () => {
    const r = await app.request('POST', '/api/v1/projects', { token: a.token, body: { id: 'noname' } });
    expect(r).toMatchObject({ status: 400, body: { success: false, error: 'Missing required field: name' } });
  });

  test('name length in code points: 255 emoji ok, 256 → 400, empty → 400', async () => {
    const ok = await app.request('POST', '/api/v1/projects', { token: a.token, body: { name: '😀'.repeat(255) } });
    expect(ok.status).toBe(201);
    expect(ok.body.data.project.name).toBe('😀'.repeat(255));
    const long = await app.request('POST', '/api/v1/projects', { token: a.token, body: { name: 'x'.repeat(256) } });
    expect(long.status).toBe(400);
    const empty = await app.request('POST', '/api/v1/projects', { token: a.token, body: { name: '' } });
    expect(empty.status).toBe(400);
  });

  test('bad icon / color: message lists the allowed values; case-sensitive', async () => {
    const c = await app.request('POST', '/api/v1/projects', { token: a.token, body: { name: 'x', color: 'Blue' } });
    expect(c.status).toBe(400);
    expect(c.body.error).toBe('Invalid value for color. Must be one of: rose, pink, orange, amber, emerald, cyan, blue, purple, slate, gray');
    const i = await app.request('POST', '/api/v1/projects', { token: a.token, body: { name: 'x', icon: 'code2' } });
    expect(i.status).toBe(400);
    expect(i.body.error).toMatch(/^Invalid value for icon\. Must be one of: Code2, Terminal, Bot, .*Settings, Globe$/);
  });

  test('non-object body → 400', async () => {
    const r = await app.request('POST', '/api/v1/projects', { token: a.token, body: '[1,2]', headers: { 'Content-Type': 'application/json' } });
    expect(r.status).toBe(400);
  });
});

describe('GET /api/v1/projects', () => {
  test('only own projects, most recent activity first, with stats', async () => {
    const u = await app.createUser('lister');
    await app.request('POST', '/api/v1/projects', { token: u.token, body: { id: 'l-old', name: 'old' } });
    await app.request('POST', '/api/v1/projects', { token: u.token, body: { id: 'l-mid', name: 'mid' } });
    await new Promise((r) => setTimeout(r, 5));
    await app.put(u, 'l-old', SID(1), { name: 's', markdown: 'héllo' });
    const r = await app.request('GET', '/api/v1/projects', { token: u.token });
    expect(r.status).toBe(200);
    expect(r.body.data.total).toBe(2);
    expect(r.body.data.projects.map((p: any) => p.id)).toEqual(['l-old', 'l-mid']);
    const old = r.body.data.projects[0];
    expect(old.sessionCount).toBe(1);
    expect(old.totalMarkdownSize).toBe(6);
    const s = await app.request('GET', `/api/v1/projects/l-old/sessions/${SID(1)}`, { token: u.token });
    expect(old.lastActivity).toBe(s.body.data.session.updatedAt);
    const other = await app.request('GET', '/api/v1/projects', { token: b.token });
    expect(other.body.data.projects.map((p: any) => p.id)).not.toContain('l-old');
  });
});

describe('GET/PATCH/DELETE /api/v1/projects/{id}', () => {
  beforeAll(async () => {
    await app.request('POST', '/api/v1/projects', { token: a.token, body: { id: 'gp', name: 'GP' } });
  });

  test('GET own → 200, unknown → 404, bad id → 404, other user → 403', async () => {
    const r = await app.request('GET', '/api/v1/projects/gp', { token: a.token });
    expect(r.status).toBe(200);
    expect(Object.keys(r.body.data.project).sort()).toEqual(PROJECT_KEYS);
    expect(await app.request('GET', '/api/v1/projects/nope', { token: a.token })).toMatchObject({
      status: 404,
      body: { success: false, error: 'Project not found' },
    });
    expect((await app.request('GET', '/api/v1/projects/-bad', { token: a.token })).status).toBe(404);
    expect(await app.request('GET', '/api/v1/projects/gp', { token: b.token })).toMatchObject({
      status: 403,
      body: { success: false, error: 'Insufficient permissions' },
    });
  });

  test('PATCH name, icon, color', async () => {
    const before = (await app.request('GET', '/api/v1/projects/gp', { token: a.token })).body.data.project;
    await new Promise((r) => setTimeout(r, 5));
    const r = await app.request('PATCH', '/api/v1/projects/gp', { token: a.token, body: { name: 'Renamed', icon: 'Bug', color: 'gray' } });
    expect(r.status).toBe(200);
    // The fields directly in `data`, as both SDKs read them.
    expect(Object.keys(r.body.data).sort()).toEqual(PROJECT_KEYS);
    expect(r.body.data).toMatchObject({ id: 'gp', name: 'Renamed', icon: 'Bug', color: 'gray', createdAt: before.createdAt });
    expect(r.body.data.updatedAt > before.updatedAt).toBe(true);
    const one = await app.request('PATCH', '/api/v1/projects/gp', { token: a.token, body: { color: 'amber' } });
    expect(one.body.data).toMatchObject({ name: 'Renamed', icon: 'Bug', color: 'amber' });
    expect(one.body.data.project).toBeUndefined();
  });

  test('PATCH errors: empty → 400, bad color → 400, null name → 400, unknown → 404, other → 403 (unchanged)', async () => {
    expect((await app.request('PATCH', '/api/v1/projects/gp', { token: a.token, body: {} })).status).toBe(400);
    const bad = await app.request('PATCH', '/api/v1/projects/gp', { token: a.token, body: { color: 'red' } });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatch(/^Invalid value for color\. Must be one of: rose, pink/);
    expect((await app.request('PATCH', '/api/v1/projects/gp', { token: a.token, body: { name: null } })).status).toBe(400);
    expect((await app.request('PATCH', '/api/v1/projects/gp', { token: a.token, body: { name: '' } })).status).toBe(400);
    expect((await app.request('PATCH', '/api/v1/projects/zzz', { token: a.token, body: { name: 'n' } })).status).toBe(404);
    const before = (await app.request('GET', '/api/v1/projects/gp', { token: a.token })).body.data.project;
    const other = await app.request('PATCH', '/api/v1/projects/gp', { token: b.token, body: { name: 'hacked' } });
    expect(other).toMatchObject({ status: 403, body: { success: false, error: 'Insufficient permissions' } });
    const after = (await app.request('GET', '/api/v1/projects/gp', { token: a.token })).body.data.project;
    expect(after).toEqual(before);
  });

  test('validation (400) comes before existence (404)', async () => {
    const r = await app.request('PATCH', '/api/v1/projects/zzz', { token: a.token, body: { color: 'red' } });
    expect(r.status).toBe(400);
  });

  test('DELETE: other → 403 (kept), own → 200 with deletedProject, cascades sessions and content', async () => {
    await app.request('POST', '/api/v1/projects', { token: a.token, body: { id: 'del-me', name: 'D', color: 'cyan' } });
    await app.put(a, 'del-me', SID(1), { name: 's1', markdown: 'abc', rawData: 'raw' });
    await app.put(a, 'del-me', SID(2), { name: 's2', markdown: 'de' });
    const forb = await app.request('DELETE', '/api/v1/projects/del-me', { token: b.token });
    expect(forb).toMatchObject({ status: 403, body: { success: false, error: 'Insufficient permissions' } });
    expect((await app.request('GET', '/api/v1/projects/del-me/sessions', { token: a.token })).body.data.total).toBe(2);

    const r = await app.request('DELETE', '/api/v1/projects/del-me', { token: a.token });
    expect(r.status).toBe(200);
    expect(r.body.success).toBe(true);
    expect(Object.keys(r.body.data).sort()).toEqual(['deletedAt', 'deletedProject']);
    expect(r.body.data.deletedAt).toMatch(ISO);
    expect(r.body.data.deletedProject).toMatchObject({ id: 'del-me', name: 'D', color: 'cyan', sessionCount: 2, totalMarkdownSize: 5 });

    expect((await app.request('GET', '/api/v1/projects/del-me', { token: a.token })).status).toBe(404);
    expect((await app.request('GET', `/api/v1/projects/del-me/sessions/${SID(1)}`, { token: a.token })).status).toBe(404);
    expect((await app.request('DELETE', '/api/v1/projects/del-me', { token: a.token })).status).toBe(404);
    const pool = app.deps.db.pool;
    const [s] = await pool.query("SELECT COUNT(*) AS n FROM sessions WHERE projectId = 'del-me'");
    const [c] = await pool.query("SELECT COUNT(*) AS n FROM session_chunks WHERE projectId = 'del-me'");
    const [l] = await pool.query("SELECT COUNT(*) AS n FROM session_labels WHERE projectId = 'del-me'");
    expect([Number(s.n), Number(c.n), Number(l.n)]).toEqual([0, 0, 0]);
    // The id is free again and can be re-created, empty.
    await app.put(a, 'del-me', SID(1));
    expect((await app.request('GET', '/api/v1/projects/del-me/sessions', { token: a.token })).body.data.total).toBe(1);
  });

  test('DELETE unknown → 404, bad id → 404', async () => {
    expect(await app.request('DELETE', '/api/v1/projects/never', { token: a.token })).toMatchObject({ status: 404, body: { error: 'Project not found' } });
    expect((await app.request('DELETE', '/api/v1/projects/.bad', { token: a.token })).status).toBe(404);
  });
});
