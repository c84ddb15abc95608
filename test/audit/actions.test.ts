/**
 * Every audited action, done through the REST door as a client would: each writes exactly one
 * entry (its action, actor, target, result, the client's address truncated), and no entry written
 * during the whole file holds any secret the actions used or minted.
 */
import { createUser } from '../../src/services/users';
import { operatorCtx } from '../../src/services/context';
import { SID, startTestApp, type TestApp } from '../support/app';
import { browser } from '../support/cookie-client';

let app: TestApp;
const PASSWORD = 'correct horse battery';
const NEW_PASSWORD = 'a brand new passphrase';
/** Every secret the file's actions send or receive: none may be in an entry. */
const secrets: string[] = [PASSWORD, NEW_PASSWORD];
let seq = 0;
const email = (p: string) => `${p}-${process.pid}-${++seq}@example.test`;

let admin: { id: string; email: string; token: string };
let bob: { id: string; email: string; token: string };
let lastId = 0;

type Entry = Record<string, any>;
const entriesAfter = async (id: number): Promise<Entry[]> => app.deps.db.pool.query('SELECT * FROM audit_entries WHERE id > ? ORDER BY id', [id]);

/** Runs `fn` and returns the one entry it wrote (fails when it wrote none or several). */
async function oneEntry(fn: () => Promise<unknown>): Promise<Entry> {
  const [{ m }] = await app.deps.db.pool.query('SELECT COALESCE(MAX(id), 0) AS m FROM audit_entries');
  lastId = Number(m);
  await fn();
  const rows = await entriesAfter(lastId);
  expect(rows.map((r) => r.action)).toHaveLength(1);
  expect(rows[0].ip).toBe('127.0.0.0/24');
  return rows[0];
}

async function userWithKey(prefix: string, role: 'admin' | 'member') {
  const e = email(prefix);
  const u = await createUser(operatorCtx(app.deps.db), e, prefix, { password: PASSWORD, role });
  const { token } = await app.newKey(u);
  secrets.push(token);
  return { id: u.id, email: e, token };
}

const req = (token: string | null, method: string, path: string, body?: unknown) => app.request(method, `/api/v1${path}`, { token, body });

beforeAll(async () => {
  // Webhooks here point at this machine.
  app = await startTestApp({ env: { WEBHOOK_ALLOW_PRIVATE: 'true' } });
  admin = await userWithKey('admin', 'admin');
  bob = await userWithKey('bob', 'member');
});
afterAll(() => app?.close());

describe('one entry per action', () => {
  test('sign-in: success and each failure', async () => {
    const ok = await oneEntry(async () => expect((await browser(app).signIn(bob.email, PASSWORD)).status).toBe(200));
    expect(ok).toMatchObject({ action: 'sign_in', result: 'success', actorUserId: bob.id, actorLabel: bob.email, targetType: 'user', targetId: bob.id });
    const wrong = await oneEntry(async () => expect((await req(null, 'POST', '/auth/sign-in', { email: bob.email, password: 'guess' })).status).toBe(401));
    expect(wrong).toMatchObject({ action: 'sign_in', result: 'failure', actorUserId: bob.id, detail: '{"reason":"wrong password"}' });
    const unknown = await oneEntry(async () =>
      expect((await req(null, 'POST', '/auth/sign-in', { email: 'nobody@example.test', password: 'guess' })).status).toBe(401),
    );
    expect(unknown).toMatchObject({ action: 'sign_in', result: 'failure', actorUserId: null, actorLabel: 'anonymous', targetId: null });
    secrets.push('guess');
  });

  test('API keys: created and revoked', async () => {
    let keyId = '';
    const created = await oneEntry(async () => {
      const r = await req(bob.token, 'POST', '/keys', { name: 'laptop' });
      expect(r.status).toBe(201);
      keyId = r.body.data.key.id;
      secrets.push(r.body.data.token);
    });
    expect(created).toMatchObject({ action: 'key.create', actorUserId: bob.id, targetType: 'key', targetId: keyId, result: 'success' });
    const revoked = await oneEntry(async () => expect((await req(bob.token, 'DELETE', `/keys/${keyId}`)).status).toBe(200));
    expect(revoked).toMatchObject({ action: 'key.revoke', actorUserId: bob.id, targetId: keyId });
  });

  test('device login: a code issued, exchanged, and a bad code refused', async () => {
    let code = '';
    const issued = await oneEntry(async () => {
      const r = await req(bob.token, 'POST', '/device-codes');
      expect(r.status).toBe(201);
      code = r.body.data.code;
      secrets.push(code, code.replace(/-/g, ''));
    });
    expect(issued).toMatchObject({ action: 'device.code', actorUserId: bob.id });
    const login = await oneEntry(async () => {
      const r = await req(null, 'POST', '/device-login', { device_code: code, client: 'cli', hostname: 'box' });
      expect(r.status).toBe(200);
      secrets.push(r.body.refreshToken);
    });
    expect(login).toMatchObject({ action: 'device.login', result: 'success', actorUserId: bob.id, targetType: 'key' });
    const again = await oneEntry(async () => expect((await req(null, 'POST', '/device-login', { device_code: code })).status).toBe(401));
    expect(again).toMatchObject({ action: 'device.login', result: 'failure' });
  });

  test('password: changed (and a wrong current password), reset link made and used', async () => {
    const wrong = await oneEntry(async () =>
      expect((await req(bob.token, 'POST', '/auth/password', { currentPassword: 'nope-nope-nope', newPassword: NEW_PASSWORD })).status).toBe(403),
    );
    expect(wrong).toMatchObject({ action: 'password.change', result: 'failure', actorUserId: bob.id, targetId: bob.id });
    secrets.push('nope-nope-nope');
    const changed = await oneEntry(async () =>
      expect((await req(bob.token, 'POST', '/auth/password', { currentPassword: PASSWORD, newPassword: NEW_PASSWORD, revokeCredentials: false })).status).toBe(
        200,
      ),
    );
    expect(changed).toMatchObject({ action: 'password.change', result: 'success', actorUserId: bob.id });
    let token = '';
    const requested = await oneEntry(async () => {
      const r = await req(admin.token, 'POST', `/users/${bob.id}/reset-password`);
      expect(r.status).toBe(200);
      token = new URL(r.body.data.link).searchParams.get('token')!;
      secrets.push(token, r.body.data.link);
    });
    expect(requested).toMatchObject({ action: 'password.reset_request', actorUserId: admin.id, targetId: bob.id });
    const reset = await oneEntry(async () =>
      expect((await req(null, 'POST', '/auth/reset-password', { token, password: PASSWORD, revokeCredentials: false })).status).toBe(200),
    );
    expect(reset).toMatchObject({ action: 'password.reset', result: 'success', actorUserId: bob.id });
    const spent = await oneEntry(async () => expect((await req(null, 'POST', '/auth/reset-password', { token, password: PASSWORD })).status).toBe(400));
    expect(spent).toMatchObject({ action: 'password.reset', result: 'failure' });
  });

  test('users: created, disabled, enabled', async () => {
    let id = '';
    const created = await oneEntry(async () => {
      const r = await req(admin.token, 'POST', '/users', { email: email('carol'), name: 'Carol', password: PASSWORD });
      expect(r.status).toBe(201);
      id = r.body.data.user.id;
    });
    expect(created).toMatchObject({ action: 'user.create', actorUserId: admin.id, targetId: id, detail: '{"role":"member"}' });
    expect(await oneEntry(async () => expect((await req(admin.token, 'POST', `/users/${id}/disable`)).status).toBe(200))).toMatchObject({
      action: 'user.disable',
      targetId: id,
    });
    expect(await oneEntry(async () => expect((await req(admin.token, 'POST', `/users/${id}/enable`)).status).toBe(200))).toMatchObject({
      action: 'user.enable',
      targetId: id,
    });
  });

  test('users: deleted (one entry, naming the user by id, their email and what went with them)', async () => {
    const dora = await userWithKey('dora', 'member');
    const deleted = await oneEntry(async () => expect((await req(admin.token, 'DELETE', `/users/${dora.id}`)).status).toBe(200));
    expect(deleted).toMatchObject({ action: 'user.delete', result: 'success', actorUserId: admin.id, targetType: 'user', targetId: dora.id });
    expect(JSON.parse(deleted.detail)).toEqual({ email: dora.email, role: 'member', projects: 0, sessions: 0, teams: 0 });
  });

  test('teams: created, a member added, their role changed, removed; projects moved into it and deleted; the team deleted', async () => {
    let teamId = '';
    const created = await oneEntry(async () => {
      const r = await req(bob.token, 'POST', '/teams', { name: 'Audited' });
      expect(r.status).toBe(201);
      teamId = r.body.data.team?.id ?? r.body.data.id;
    });
    expect(created).toMatchObject({ action: 'team.create', teamId, targetId: teamId });
    const carol = await userWithKey('carol', 'member');
    expect(
      await oneEntry(async () => expect((await req(bob.token, 'POST', `/teams/${teamId}/members`, { email: carol.email, role: 'member' })).status).toBe(201)),
    ).toMatchObject({
      action: 'member.add',
      teamId,
      targetId: carol.id,
    });
    expect(
      await oneEntry(async () => expect((await req(bob.token, 'PATCH', `/teams/${teamId}/members/${carol.id}`, { role: 'viewer' })).status).toBe(200)),
    ).toMatchObject({
      action: 'member.role',
      teamId,
      detail: '{"from":"member","to":"viewer"}',
    });
    expect(await oneEntry(async () => expect((await req(bob.token, 'DELETE', `/teams/${teamId}/members/${carol.id}`)).status).toBe(200))).toMatchObject({
      action: 'member.remove',
      teamId,
      targetId: carol.id,
    });

    expect([200, 201]).toContain((await app.put(bob.token, 'audited', SID(1))).status);
    expect(await oneEntry(async () => expect((await req(bob.token, 'POST', '/projects/audited/move', { teamId })).status).toBe(200))).toMatchObject({
      action: 'project.move',
      teamId,
      projectId: 'audited',
    });
    expect(await oneEntry(async () => expect((await req(bob.token, 'DELETE', '/projects/audited')).status).toBe(200))).toMatchObject({
      action: 'project.delete',
      teamId,
      projectId: 'audited',
      detail: '{"sessions":1}',
    });
    expect(await oneEntry(async () => expect((await req(bob.token, 'DELETE', `/teams/${teamId}`)).status).toBe(200))).toMatchObject({
      action: 'team.delete',
      teamId,
    });
  });

  test('share links: created and revoked', async () => {
    expect([200, 201]).toContain((await app.put(bob.token, 'shared', SID(2))).status);
    let share: any;
    const created = await oneEntry(async () => {
      const r = await req(bob.token, 'POST', `/projects/shared/sessions/${SID(2)}/shares`, {});
      expect(r.status).toBe(201);
      share = r.body.data.share;
      secrets.push(share.url, share.url.split('/s/')[1]);
    });
    expect(created).toMatchObject({ action: 'share.create', targetType: 'share', targetId: share.id, projectId: 'shared', actorUserId: bob.id });
    const revoked = await oneEntry(async () => expect((await req(bob.token, 'DELETE', `/shares/${share.id}`)).status).toBe(200));
    expect(revoked).toMatchObject({ action: 'share.revoke', targetId: share.id, projectId: 'shared' });
  });

  test('webhooks: made and deleted, naming the receiver by its host alone', async () => {
    let hook: any;
    const created = await oneEntry(async () => {
      const r = await req(bob.token, 'POST', '/webhooks', {
        url: 'http://127.0.0.1:9/hooks/receiver-secret-path?key=query-secret',
        events: ['session.created'],
      });
      expect(r.status).toBe(201);
      hook = r.body.data.webhook;
      secrets.push(r.body.data.secret, 'receiver-secret-path', 'query-secret');
    });
    expect(created).toMatchObject({
      action: 'webhook.create',
      targetType: 'webhook',
      targetId: hook.id,
      actorUserId: bob.id,
      detail: '{"host":"127.0.0.1:9","events":"session.created"}',
    });
    const deleted = await oneEntry(async () => expect((await req(bob.token, 'DELETE', `/webhooks/${hook.id}`)).status).toBe(200));
    expect(deleted).toMatchObject({ action: 'webhook.delete', targetId: hook.id, detail: '{"host":"127.0.0.1:9"}' });
    // Another's webhook (or none) is not found, and writes nothing.
    const [{ m }] = await app.deps.db.pool.query('SELECT COALESCE(MAX(id), 0) AS m FROM audit_entries');
    expect((await req(bob.token, 'DELETE', `/webhooks/${hook.id}`)).status).toBe(404);
    expect(await entriesAfter(Number(m))).toEqual([]);
  });

  test('export and import', async () => {
    let tar: Buffer = Buffer.alloc(0);
    const exported = await oneEntry(async () => {
      const r = await req(bob.token, 'GET', '/export');
      expect(r.status).toBe(200);
      tar = r.raw;
    });
    expect(exported).toMatchObject({ action: 'export', actorUserId: bob.id, targetType: 'user', targetId: bob.id, detail: '{"projects":1,"sessions":1}' });
    const imported = await oneEntry(async () => {
      const r = await app.request('POST', '/api/v1/import?onConflict=skip', { token: bob.token, body: tar, headers: { 'Content-Type': 'application/x-tar' } });
      expect(r.status).toBe(200);
    });
    expect(imported).toMatchObject({
      action: 'import',
      result: 'success',
      actorUserId: bob.id,
      detail: '{"imported":0,"skipped":1,"failed":0,"onConflict":"skip"}',
    });
    const bad = await oneEntry(async () => {
      const r = await app.request('POST', '/api/v1/import', {
        token: bob.token,
        body: Buffer.from('not a tar'),
        headers: { 'Content-Type': 'application/x-tar' },
      });
      expect(r.status).toBe(400);
    });
    expect(bad).toMatchObject({ action: 'import', result: 'failure', detail: '{"error":"VALIDATION_ERROR"}' });
  });

  test('retention and legal hold: each setting changed is one entry', async () => {
    expect([200, 201]).toContain((await app.put(bob.token, 'kept', SID(3))).status);
    const days = await oneEntry(async () => expect((await req(bob.token, 'PATCH', '/projects/kept', { retentionDays: 30 })).status).toBe(200));
    expect(days).toMatchObject({
      action: 'retention.set',
      targetType: 'project',
      targetId: 'kept',
      projectId: 'kept',
      actorUserId: bob.id,
      detail: '{"retentionDays":30}',
    });
    const hold = await oneEntry(async () => expect((await req(admin.token, 'PATCH', '/projects/kept', { legalHold: true })).status).toBe(200));
    expect(hold).toMatchObject({ action: 'legal_hold.set', targetId: 'kept', actorUserId: admin.id, detail: '{"legalHold":true}' });
    const off = await oneEntry(async () => expect((await req(bob.token, 'PATCH', '/projects/kept', { retentionDays: null })).status).toBe(200));
    expect(off).toMatchObject({ action: 'retention.set', detail: '{"retentionDays":null}' });
  });

  test("a project moved from one team to another is in both teams' logs", async () => {
    const team = async (name: string) => {
      const r = await req(bob.token, 'POST', '/teams', { name });
      expect(r.status).toBe(201);
      return (r.body.data.team?.id ?? r.body.data.id) as string;
    };
    const [from, to] = [await team('Leaving'), await team('Joining')];
    expect([200, 201]).toContain((await app.put(bob.token, 'wanders', SID(4))).status);
    expect((await req(bob.token, 'POST', '/projects/wanders/move', { teamId: from })).status).toBe(200);
    const [{ m }] = await app.deps.db.pool.query('SELECT COALESCE(MAX(id), 0) AS m FROM audit_entries');
    expect((await req(bob.token, 'POST', '/projects/wanders/move', { teamId: to })).status).toBe(200);
    const rows = await entriesAfter(Number(m));
    expect(rows.map((r) => [r.action, r.teamId, r.projectId])).toEqual([
      ['project.move', to, 'wanders'],
      ['project.move', from, 'wanders'],
    ]);
    expect(JSON.parse(rows[1].detail)).toEqual({ from, to, toType: 'team' });
  });

  test('no entry holds a secret the actions used or minted', async () => {
    const rows = await entriesAfter(0);
    expect(rows.length).toBeGreaterThan(20);
    const text = JSON.stringify(rows);
    const found = secrets.filter((s) => s.length >= 4 && text.includes(s));
    expect(found).toEqual([]);
    expect(secrets.length).toBeGreaterThan(10);
  });
});
