/** GET /audit and its JSON-lines export: who reads what, filters, paging; and the retention prune. */
import { createUser } from '../../src/services/users';
import { operatorCtx } from '../../src/services/context';
import { AUDIT_FORBIDDEN, pruneAudit } from '../../src/services/audit-log';
import { startTestApp, type TestApp } from '../support/app';

let app: TestApp;
const PASSWORD = 'correct horse battery';
let seq = 0;
let admin: { id: string; token: string };
let teamAdmin: { id: string; email: string; token: string };
let member: { id: string; email: string; token: string };
let teamId = '';

async function userWithKey(prefix: string, role: 'admin' | 'member') {
  const email = `${prefix}-${process.pid}-${++seq}@example.test`;
  const u = await createUser(operatorCtx(app.deps.db), email, prefix, { password: PASSWORD, role });
  return { id: u.id, email, token: (await app.newKey(u)).token };
}
const get = (token: string, path: string) => app.request('GET', `/api/v1${path}`, { token });

beforeAll(async () => {
  app = await startTestApp();
  admin = await userWithKey('admin', 'admin');
  teamAdmin = await userWithKey('lead', 'member');
  member = await userWithKey('member', 'member');
  const t = await app.request('POST', '/api/v1/teams', { token: teamAdmin.token, body: { name: 'Audited' } });
  teamId = t.body.data.team?.id ?? t.body.data.id;
  expect((await app.request('POST', `/api/v1/teams/${teamId}/members`, { token: teamAdmin.token, body: { email: member.email, role: 'member' } })).status).toBe(
    201,
  );
  // Outside the team: a failed and a successful sign-in of the member.
  expect((await app.request('POST', '/api/v1/auth/sign-in', { body: { email: member.email, password: 'wrong' } })).status).toBe(401);
  expect((await app.request('POST', '/api/v1/auth/sign-in', { body: { email: member.email, password: PASSWORD } })).status).toBe(200);
});
afterAll(() => app?.close());

test('an administrator reads every entry, newest first, each in the documented shape', async () => {
  const r = await get(admin.token, '/audit');
  expect(r.status).toBe(200);
  const actions = r.body.data.entries.map((e: any) => e.action);
  expect(actions).toEqual([
    'sign_in',
    'sign_in',
    'member.add',
    'team.create',
    'key.create',
    'user.create',
    'key.create',
    'user.create',
    'key.create',
    'user.create',
  ]);
  expect(r.body.data.nextCursor).toBeNull();
  expect(r.body.data.entries[0]).toEqual({
    id: expect.any(String),
    at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    actor: { userId: member.id, label: member.email },
    action: 'sign_in',
    target: { type: 'user', id: member.id },
    teamId: null,
    projectId: null,
    ip: '127.0.0.0/24',
    result: 'success',
    detail: null,
  });
});

test("a team's admin reads only that team's entries; anyone else is refused", async () => {
  const r = await get(teamAdmin.token, '/audit');
  expect(r.status).toBe(200);
  expect(r.body.data.entries.map((e: any) => [e.action, e.teamId])).toEqual([
    ['member.add', teamId],
    ['team.create', teamId],
  ]);
  expect(await get(member.token, '/audit')).toMatchObject({ status: 403, body: { success: false, error: AUDIT_FORBIDDEN } });
  expect((await get(member.token, '/audit/export')).status).toBe(403);
  expect((await get(teamAdmin.token, '/audit?teamId=someone-elses')).status).toBe(403);
});

test('filters intersect: actor, action, target, result, time', async () => {
  const ids = async (q: string) => (await get(admin.token, `/audit?${q}`)).body.data.entries.map((e: any) => `${e.action}:${e.result}`);
  expect(await ids('action=sign_in&result=failure')).toEqual(['sign_in:failure']);
  expect(await ids(`actor=${encodeURIComponent(member.email)}`)).toEqual(['sign_in:success', 'sign_in:failure']);
  expect(await ids(`actor=${member.id}&result=success`)).toEqual(['sign_in:success']);
  expect(await ids(`targetType=team&targetId=${teamId}`)).toEqual(['team.create:success']);
  expect(await ids(`teamId=${teamId}`)).toEqual(['member.add:success', 'team.create:success']);
  expect(await ids('to=2000-01-01T00:00:00Z')).toEqual([]);
  expect((await ids(`from=${encodeURIComponent(new Date(Date.now() - 3600_000).toISOString())}`)).length).toBe(10);
});

test('bad filters and cursors are 400s that say which', async () => {
  expect(await get(admin.token, '/audit?from=yesterday')).toMatchObject({ status: 400, body: { error: expect.stringContaining('from') } });
  expect(await get(admin.token, '/audit?result=maybe')).toMatchObject({ status: 400, body: { error: 'Invalid value for result: must be success or failure' } });
  expect(await get(admin.token, '/audit?limit=0')).toMatchObject({ status: 400, body: { error: expect.stringContaining('limit') } });
  expect(await get(admin.token, '/audit?cursor=bm9wZQ')).toMatchObject({ status: 400, body: { error: 'Invalid cursor' } });
  expect(await get(admin.token, '/audit?action=a&action=b')).toMatchObject({ status: 400, body: { error: expect.stringContaining('action') } });
});

test('cursor paging walks every entry once', async () => {
  const all = (await get(admin.token, '/audit')).body.data.entries.map((e: any) => e.id);
  const seen: string[] = [];
  let cursor = '';
  for (let i = 0; i < 10; i++) {
    const r = await get(admin.token, `/audit?limit=3${cursor ? `&cursor=${cursor}` : ''}`);
    expect(r.status).toBe(200);
    seen.push(...r.body.data.entries.map((e: any) => e.id));
    if (!r.body.data.nextCursor) break;
    cursor = r.body.data.nextCursor;
  }
  expect(seen).toEqual(all);
});

test('the export streams every entry the caller may read as JSON lines, across batches', async () => {
  // Many more than one batch (500) of old entries, written behind the service's back.
  const rows = Array.from({ length: 1203 }, (_, i) => [`old-${i}`]);
  await app.deps.db.pool.batch(
    "INSERT INTO audit_entries (at, actorLabel, action, targetType, targetId, result) VALUES (NOW(3) - INTERVAL 1 DAY, 'operator', 'user.create', 'user', ?, 'success')",
    rows,
  );
  const r = await get(admin.token, '/audit/export');
  expect(r.status).toBe(200);
  expect(r.headers['content-type']).toMatch(/^application\/x-ndjson/);
  const lines = r.text
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l));
  expect(lines).toHaveLength(1213);
  expect(new Set(lines.map((e) => e.id)).size).toBe(1213);
  const ids = lines.map((e) => Number(e.id));
  expect(ids).toEqual([...ids].sort((a, b) => b - a));
  const team = await get(teamAdmin.token, '/audit/export?action=team.create');
  expect(
    team.text
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l).action),
  ).toEqual(['team.create']);
  expect((await get(admin.token, '/audit/export?to=nope')).status).toBe(400);
});

test('entries older than the retention are pruned, by one instance at a time', async () => {
  await app.deps.db.pool.query(
    "INSERT INTO audit_entries (at, actorLabel, action, targetType, result) VALUES (NOW(3) - INTERVAL 400 DAY, 'operator', 'user.create', 'user', 'success')",
  );
  const count = async () => Number((await app.deps.db.pool.query('SELECT COUNT(*) AS n FROM audit_entries'))[0].n);
  const before = await count();
  const ns = app.deps.config.namespace;
  // Another instance holds the lock: this one leaves it to them.
  const other = await app.deps.db.pool.getConnection();
  try {
    await other.query('SELECT GET_LOCK(?, 0)', [`${ns}:audit-prune`]);
    expect(await pruneAudit(app.deps.db, ns, 365)).toBeNull();
  } finally {
    await other.query('SELECT RELEASE_LOCK(?)', [`${ns}:audit-prune`]);
    await other.release();
  }
  expect(await pruneAudit(app.deps.db, ns, 365)).toBe(1);
  expect(await count()).toBe(before - 1);
});
