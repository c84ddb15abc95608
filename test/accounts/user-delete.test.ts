/**
 * DELETE /api/v1/users/{userId}, with content in the database and in S3 (an s3rver of this
 * file's own): an instance administrator deletes a user with their own projects exactly as
 * deleting each project does (sessions, content rows and objects, share links, index documents
 * through the outbox, `project.delete` entries), their keys, device tokens, connector grants,
 * browser sessions, device codes, webhooks and memberships; team projects stay with the team.
 * Refusals delete nothing: 403 for anyone else, 404, 409 for yourself, the last administrator,
 * the last admin of a team. (Legal hold: test/operations/legal-hold.test.ts.)
 */
import { contentStore } from '../../src/data/content-store';
import { inTransaction } from '../../src/data/transaction';
import { deleteUserRow, lockUserAndAdmins } from '../../src/data/users';
import { sweepObjects } from '../../src/data/content-store/sweep';
import { operatorCtx } from '../../src/services/context';
import { deleteUser } from '../../src/services/user-delete';
import { createUser } from '../../src/services/users';
import { SID, startTestApp, type TestApp, type TestUser } from '../support/app';
import { browser } from '../support/cookie-client';
import { createTestDatabase } from '../support/db';
import { connect, token as oauthToken } from '../support/oauth';
import { bucketFor, createBucket, s3Env, startS3rver, type TestS3 } from '../support/s3';

const PASSWORD = 'correct horse battery';

describe.each(['db', 's3'] as const)('content in %s', (mode) => {
  let s3: TestS3 | undefined;
  let app: TestApp;
  let root: TestUser;
  let seq = 0;

  beforeAll(async () => {
    const db = await createTestDatabase('sa_udel');
    let env: Record<string, string> = { WORKERS_ENABLED: 'false', WEBHOOK_ALLOW_PRIVATE: 'true' };
    if (mode === 's3') {
      s3 = await startS3rver();
      await createBucket(s3.endpoint, bucketFor(db.name));
      env = { ...env, ...s3Env(s3.endpoint, bucketFor(db.name)) };
    }
    app = await startTestApp({ db, rateLimit: false, env });
    root = await person('root', 'admin');
  }, 120_000);
  afterAll(async () => {
    await app?.close();
    await app?.db.drop();
    await s3?.close();
  }, 120_000);

  async function person(name: string, role: 'admin' | 'member' = 'member'): Promise<TestUser> {
    const email = `${name}-${process.pid}-${++seq}@example.test`;
    const u = await createUser(operatorCtx(app.deps.db), email, name, { password: PASSWORD, role });
    return { id: u.id, email, ...(await app.newKey(u)) };
  }
  const req = (u: { token: string }, method: string, p: string, body?: unknown) => app.request(method, p, { token: u.token, body });
  const count = async (sql: string, ...args: unknown[]) => (await app.deps.db.writes.query<{ n: number }>(sql, ...args))[0].n;

  test('deletes the user, their projects with everything they hold, and their credentials; team projects stay', async () => {
    const ada = await person('ada');
    const bob = await person('bob');
    const p1 = `ada-one-${mode}`;
    const p2 = `ada-two-${mode}`;
    await app.upload(ada, p1, SID(1), { name: 'one', markdown: `# one\n\n${'words '.repeat(2000)}` });
    await app.upload(ada, p1, SID(2), { name: 'two', markdown: '# two' });
    await app.upload(ada, p2, SID(3), { name: 'three', markdown: '# three' });
    expect((await req(ada, 'POST', `/api/v1/projects/${p1}/sessions/${SID(1)}/shares`, {})).status).toBe(201);
    expect((await req(ada, 'POST', '/api/v1/webhooks', { url: 'http://127.0.0.1:9/hook', events: ['session.deleted'], projectId: p1 })).status).toBe(201);

    // A team bob administers, with a project ada uploaded to: it stays, with her session.
    const teamId = (await req(bob, 'POST', '/api/v1/teams', { name: `Kept ${mode}` })).body.data.team.id;
    expect((await req(bob, 'POST', `/api/v1/teams/${teamId}/members`, { email: ada.email, role: 'member' })).status).toBe(201);
    const teamProject = `team-${mode}`;
    expect((await req(bob, 'POST', '/api/v1/projects', { id: teamProject, name: 'T', teamId })).status).toBe(201);
    await app.upload(ada, teamProject, SID(4), { name: 'four', markdown: '# four' });

    // Every way she signs in: a key, a browser session, a device token, a connector grant.
    const b = browser(app);
    expect((await b.signIn(ada.email, PASSWORD)).status).toBe(200);
    const code = await b.request('POST', '/api/v1/device-codes');
    const login = await app.request('POST', '/api/v1/device-login', { body: { device_code: code.body.data.code } });
    expect(login.status).toBe(200);
    const connector = await connect(app, b, { name: 'Ada connector' });

    const objectKeys = (await app.deps.db.writes.query<{ objectKey: string }>('SELECT objectKey FROM session_objects WHERE projectId IN (?, ?)', p1, p2)).map(
      (r) => r.objectKey,
    );
    if (mode === 's3') expect(objectKeys.length).toBeGreaterThan(0);
    else expect(await count('SELECT COUNT(*) AS n FROM session_chunks WHERE projectId IN (?, ?)', p1, p2)).toBeGreaterThan(0);
    const [{ m }] = await app.deps.db.writes.query<{ m: number }>('SELECT COALESCE(MAX(id), 0) AS m FROM audit_entries');

    // Refusals first: nothing changes.
    const member = await req(bob, 'DELETE', `/api/v1/users/${ada.id}`);
    expect([member.status, member.body]).toEqual([403, { success: false, error: "Only the service's administrators can manage accounts" }]);
    expect((await req(root, 'DELETE', '/api/v1/users/no-such-user')).body).toEqual({ success: false, error: 'User not found' });
    const self = await req(root, 'DELETE', `/api/v1/users/${root.id}`);
    expect([self.status, self.body.error]).toEqual([409, 'You cannot delete your own account']);
    expect((await req(ada, 'GET', `/api/v1/projects/${p1}`)).status).toBe(200);

    const r = await req(root, 'DELETE', `/api/v1/users/${ada.id}`);
    expect(r.status).toBe(200);
    expect(r.body.data).toEqual({ userId: ada.id, projects: 2, sessions: 3, teams: 1 });

    // Her rows, and everything under her projects, are gone.
    expect(await count('SELECT COUNT(*) AS n FROM users WHERE id = ?', ada.id)).toBe(0);
    expect(await count('SELECT COUNT(*) AS n FROM projects WHERE id IN (?, ?)', p1, p2)).toBe(0);
    for (const table of ['sessions', 'session_chunks', 'session_objects', 'session_labels', 'shares'])
      expect([table, await count(`SELECT COUNT(*) AS n FROM ${table} WHERE projectId IN (?, ?)`, p1, p2)]).toEqual([table, 0]);
    for (const table of ['api_keys', 'user_sessions', 'device_codes', 'team_members', 'webhooks', 'oauth_codes'])
      expect([table, await count(`SELECT COUNT(*) AS n FROM ${table} WHERE userId = ?`, ada.id)]).toEqual([table, 0]);
    expect(await count('SELECT COUNT(*) AS n FROM shares WHERE createdBy = ?', ada.id)).toBe(0);
    // The index documents go through the outbox, as a project's delete sends them.
    const outbox = await app.deps.db.writes.query<{ projectId: string }>(
      "SELECT projectId FROM search_outbox WHERE op = 'delete_project' AND userId = ? ORDER BY projectId",
      ada.id,
    );
    expect(outbox.map((o) => o.projectId)).toEqual([p1, p2]);
    // One user.delete entry beside each project's own; none holds a secret.
    const entries = await app.deps.db.writes.query<{ action: string; targetId: string; detail: string | null }>(
      'SELECT action, targetId, detail FROM audit_entries WHERE id > ? ORDER BY id',
      m,
    );
    expect(entries.filter((e) => e.action === 'project.delete').map((e) => e.targetId)).toEqual([p1, p2]);
    const deleted = entries.filter((e) => e.action === 'user.delete');
    expect(deleted).toHaveLength(1);
    expect(deleted[0].targetId).toBe(ada.id);
    expect(JSON.parse(deleted[0].detail!)).toEqual({ email: ada.email, role: 'member', projects: 2, sessions: 3, teams: 1 });
    for (const secret of [ada.token, PASSWORD, connector.tokens.access_token, connector.tokens.refresh_token, login.body.refreshToken])
      expect(JSON.stringify(entries)).not.toContain(secret);

    // Every credential is refused.
    expect((await req(ada, 'GET', '/api/v1/projects')).status).toBe(401);
    expect((await b.request('GET', '/api/v1/projects')).status).toBe(401);
    expect((await app.request('POST', '/api/v1/device-refresh', { token: login.body.refreshToken })).status).toBe(401);
    const refreshed = await oauthToken(app, { grant_type: 'refresh_token', refresh_token: connector.tokens.refresh_token, client_id: connector.clientId });
    expect(refreshed.status).toBe(400);
    expect((await browser(app).signIn(ada.email, PASSWORD)).status).toBe(401);

    // The team's project stays with the team, her session in it too; bob still administers it.
    const kept = await req(bob, 'GET', `/api/v1/projects/${teamProject}`);
    expect(kept.body.data.project).toMatchObject({ id: teamProject, sessionCount: 1 });
    expect((await req(bob, 'GET', `/api/v1/teams/${teamId}`)).body.data.members.map((x: { user: { id: string } }) => x.user.id)).toEqual([bob.id]);

    if (mode === 's3') {
      // The objects are left to the content sweep, as a project's delete leaves them.
      await app.deps.withContent!(async () => {
        const store = contentStore();
        await sweepObjects(app.deps.db.writes, store, { graceMs: 0 });
        const listed: string[] = [];
        for await (const page of store.objects!.list(`${store.prefix}content/`)) listed.push(...page.map((o) => o.key));
        expect(listed.filter((k) => objectKeys.includes(k))).toEqual([]);
        expect(listed.length).toBeGreaterThan(0); // the team's session keeps its own
      });
    }
  }, 180_000);

  test('an upload that passed authentication while the user is being deleted leaves no project without an owner', async () => {
    const eve = await person('eve');
    const projectId = `eve-race-${mode}`;
    let upload: ReturnType<typeof req> | undefined;
    await inTransaction(app.deps.db, async (tx) => {
      // The delete's first step, held open: the user's row locked for update.
      await lockUserAndAdmins(tx, eve.id);
      upload = req(eve, 'PUT', `/api/v1/projects/${projectId}/sessions/${SID(90)}`, { name: 'racing', markdown: '# racing' });
      let settled = false;
      void upload.then(
        () => (settled = true),
        () => (settled = true),
      );
      // The upload's transaction waits for that row before creating her project (a state that
      // lasts until this transaction ends, so the poll cannot miss it). The process list shows
      // the waiting statement; INNODB_TRX may not list a transaction whose first statement waits.
      // A miss fails here, within the bound, and rolls back: the row is not left locked.
      const deadline = Date.now() + 30_000;
      for (;;) {
        const running = await app.deps.db.writes.query<{ info: string }>(
          "SELECT INFO AS info FROM information_schema.PROCESSLIST WHERE DB = ? AND COMMAND = 'Query' AND INFO IS NOT NULL",
          app.db.name,
        );
        if (running.some((p) => /^SELECT id FROM users WHERE id = .* LOCK IN SHARE MODE$/.test(p.info))) break;
        if (settled || Date.now() > deadline)
          throw new Error(`the upload never waited for the user's row; running: ${JSON.stringify(running.map((p) => p.info))}`);
        await new Promise((r) => setTimeout(r, 20));
      }
      await deleteUserRow(tx, eve.id);
    });
    const r = await upload!;
    expect(r.status).toBe(401);
    expect(await count('SELECT COUNT(*) AS n FROM projects WHERE id = ?', projectId)).toBe(0);
  });

  test('the last admin of a team: 409 naming the team, nothing deleted; once another member is admin, the team keeps its projects', async () => {
    const cleo = await person('cleo');
    const dan = await person('dan');
    const name = `Only Cleo ${mode}`;
    const teamId = (await req(cleo, 'POST', '/api/v1/teams', { name })).body.data.team.id;
    expect((await req(cleo, 'POST', `/api/v1/teams/${teamId}/members`, { email: dan.email, role: 'member' })).status).toBe(201);
    const project = `cleo-team-${mode}`;
    expect((await req(cleo, 'POST', '/api/v1/projects', { id: project, name: 'C', teamId })).status).toBe(201);
    await app.upload(cleo, `cleo-own-${mode}`, SID(5), { name: 'own', markdown: '# own' });

    const r = await req(root, 'DELETE', `/api/v1/users/${cleo.id}`);
    expect([r.status, r.body.error]).toEqual([
      409,
      `This user is the last admin of the team "${name}": make another member an admin, or delete the team, first`,
    ]);
    expect((await req(cleo, 'GET', `/api/v1/projects/cleo-own-${mode}`)).body.data.project.sessionCount).toBe(1);

    expect((await req(cleo, 'PATCH', `/api/v1/teams/${teamId}/members/${dan.id}`, { role: 'admin' })).status).toBe(200);
    expect((await req(root, 'DELETE', `/api/v1/users/${cleo.id}`)).body.data).toEqual({ userId: cleo.id, projects: 1, sessions: 1, teams: 1 });
    expect((await req(dan, 'GET', `/api/v1/projects/${project}`)).status).toBe(200);
    expect(await count('SELECT COUNT(*) AS n FROM projects WHERE id = ?', `cleo-own-${mode}`)).toBe(0);
  }, 120_000);

  test('administrators: another one can be deleted; the last enabled one cannot (the operator tries)', async () => {
    const eve = await person('eve', 'admin');
    expect((await req(eve, 'DELETE', `/api/v1/users/${root.id}`)).status).toBe(200);
    expect(await count("SELECT COUNT(*) AS n FROM users WHERE role = 'admin'")).toBe(1);
    await expect(deleteUser(operatorCtx(app.deps.db), eve.id)).rejects.toMatchObject({
      code: 'CONFLICT',
      message: 'This is the last administrator: make another user an administrator first',
    });
    expect(await count('SELECT COUNT(*) AS n FROM users WHERE id = ?', eve.id)).toBe(1);
    root = eve;
  }, 60_000);
});
