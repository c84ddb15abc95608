/**
 * The retention sweep, with content in the database and in S3 (an s3rver of this file's own):
 * it deletes exactly what the preview listed (sessions whose `updatedAt` is older than the
 * retention that applies: the project's, else its team's, else RETENTION_DAYS), with their rows,
 * content objects, share links and index documents (a `delete` for each in the search outbox,
 * which every engine's worker applies) and a `session.deleted` for the project's webhooks, and
 * nothing of a project on legal hold. Small batches, so
 * that a project takes several.
 */
import { SID, startTestApp, type TestApp, type TestUser } from '../support/app';
import { createTestDatabase } from '../support/db';
import { bucketFor, createBucket, s3Env, startS3rver, type TestS3 } from '../support/s3';
import { contentStore } from '../../src/data/content-store';
import { operatorCtx } from '../../src/services/context';
import { createUser } from '../../src/services/users';
import { sweepRetention } from '../../src/services/retention-sweep';

describe.each(['db', 's3'] as const)('content in %s', (mode) => {
  let s3: TestS3 | undefined;
  let app: TestApp;
  let ada: TestUser;
  let root: TestUser;

  beforeAll(async () => {
    const db = await createTestDatabase('sa_ret');
    let env: Record<string, string> = { WORKERS_ENABLED: 'false', RETENTION_DAYS: '365', WEBHOOK_ALLOW_PRIVATE: 'true' };
    if (mode === 's3') {
      s3 = await startS3rver();
      await createBucket(s3.endpoint, bucketFor(db.name));
      env = { ...env, ...s3Env(s3.endpoint, bucketFor(db.name)) };
    }
    app = await startTestApp({ db, rateLimit: false, env });
    ada = await app.createUser('ada');
    const admin = await createUser(operatorCtx(app.deps.db), 'root@example.com', 'Root', { role: 'admin' });
    root = { id: admin.id, email: admin.email, ...(await app.newKey(admin)) };
  }, 120_000);
  afterAll(async () => {
    await app?.close();
    await app?.db.drop();
    await s3?.close();
  }, 120_000);

  const req = (u: { token: string }, method: string, p: string, body?: unknown) => app.request(method, p, { token: u.token, body });
  const age = (projectId: string, ids: string[], days: number) =>
    app.deps.db.writes.execute(
      `UPDATE sessions SET updatedAt = UTC_TIMESTAMP(3) - INTERVAL ? DAY WHERE projectId = ? AND id IN (${ids.map(() => '?').join(', ')})`,
      days,
      projectId,
      ...ids,
    );
  const count = async (sql: string, ...args: unknown[]) => (await app.deps.db.writes.query<{ n: number }>(sql, ...args))[0].n;

  test('the preview lists what the sweep then deletes, with everything the sessions left; held projects keep theirs', async () => {
    const ids = [1, 2, 3, 4, 5, 6].map(SID);
    for (const id of ids) await app.upload(ada, 'short', id, { name: `s-${id}`, markdown: `# ${id}\n\n${'words '.repeat(2000)}` });
    await app.upload(ada, 'held', SID(7), { name: 'held', markdown: '# held' });
    await app.upload(ada, 'default', SID(8), { name: 'default', markdown: '# default' });
    const teamId = (await req(ada, 'POST', '/api/v1/teams', { name: 'T' })).body.data.team.id;
    expect((await req(ada, 'POST', '/api/v1/projects', { id: 'teamp', name: 'TP', teamId })).status).toBe(201);
    await app.upload(ada, 'teamp', SID(9), { name: 'team', markdown: '# team' });

    expect((await req(ada, 'PATCH', '/api/v1/projects/short', { retentionDays: 30 })).status).toBe(200);
    expect((await req(ada, 'PATCH', '/api/v1/projects/held', { retentionDays: 1 })).status).toBe(200);
    expect((await req(root, 'PATCH', '/api/v1/projects/held', { legalHold: true })).status).toBe(200);
    expect((await req(ada, 'PATCH', `/api/v1/teams/${teamId}`, { retentionDays: 10 })).status).toBe(200);
    // 'short': five of six older than 30 days; 'held': old but held; 'default': 100 days < RETENTION_DAYS (365); 'teamp': 11 days > its team's 10.
    await age('short', ids.slice(0, 5), 31);
    await age('held', [SID(7)], 400);
    await age('default', [SID(8)], 100);
    await age('teamp', [SID(9)], 11);
    const share = await req(ada, 'POST', `/api/v1/projects/short/sessions/${SID(1)}/shares`, {});
    expect(share.status).toBe(201);
    // A webhook on the project hears of each deletion (nothing is sent here: workers are off).
    expect((await req(ada, 'POST', '/api/v1/webhooks', { url: 'http://127.0.0.1:9/hook', events: ['session.deleted'], projectId: 'short' })).status).toBe(201);
    const objectsBefore = await app.deps.db.writes.query<{ objectKey: string }>('SELECT objectKey FROM session_objects WHERE projectId = ?', 'short');
    if (mode === 's3') expect(objectsBefore.length).toBeGreaterThan(0);

    const preview = async (p: string) => (await req(ada, 'GET', `/api/v1/projects/${p}/retention/preview`)).body.data;
    const short = await preview('short');
    expect(short).toMatchObject({ projectId: 'short', retentionDays: 30, legalHold: false });
    expect(short.sessions.map((s: { id: string }) => s.id).sort()).toEqual(ids.slice(0, 5).sort());
    expect(await preview('held')).toMatchObject({ retentionDays: 1, legalHold: true, cutoff: null, sessions: [] });
    expect(await preview('default')).toMatchObject({ retentionDays: 365, sessions: [] });
    const team = await preview('teamp');
    expect(team.retentionDays).toBe(10);
    expect(team.sessions.map((s: { id: string }) => s.id)).toEqual([SID(9)]);
    expect((await req(root, 'GET', '/api/v1/projects/short/retention/preview')).status).toBe(403);

    const report = await app.deps.withContent!(() => sweepRetention(operatorCtx(app.deps.db, app.deps.config), { batch: 2 }));
    expect(report).toMatchObject({ sessions: 6, projects: 2, batches: 4 });

    const left = await app.deps.db.writes.query<{ projectId: string; id: string }>('SELECT projectId, id FROM sessions ORDER BY projectId, id');
    expect(left).toEqual([
      { projectId: 'default', id: SID(8) },
      { projectId: 'held', id: SID(7) },
      { projectId: 'short', id: SID(6) },
    ]);
    const gone = [...short.sessions.map((s: { id: string }) => s.id), SID(9)];
    const marks = gone.map(() => '?').join(', ');
    expect(await count(`SELECT COUNT(*) AS n FROM session_chunks WHERE sessionId IN (${marks})`, ...gone)).toBe(0);
    expect(await count(`SELECT COUNT(*) AS n FROM session_objects WHERE sessionId IN (${marks})`, ...gone)).toBe(0);
    expect(await count(`SELECT COUNT(*) AS n FROM shares WHERE sessionId IN (${marks})`, ...gone)).toBe(0);
    expect(await count(`SELECT COUNT(*) AS n FROM search_outbox WHERE op = 'delete' AND sessionId IN (${marks})`, ...gone)).toBe(gone.length);
    const heard = await app.deps.db.writes.query<{ payload: string }>("SELECT payload FROM webhook_deliveries WHERE type = 'session.deleted'");
    expect(heard.map((d) => JSON.parse(d.payload).data.sessionId).sort()).toEqual(short.sessions.map((s: { id: string }) => s.id).sort());
    if (mode === 's3') {
      const kept = new Set((await app.deps.db.writes.query<{ objectKey: string }>('SELECT objectKey FROM session_objects')).map((r) => r.objectKey));
      const doomed = objectsBefore.map((o) => o.objectKey).filter((k) => !kept.has(k));
      expect(doomed.length).toBeGreaterThan(0);
      const listed: string[] = [];
      await app.deps.withContent!(async () => {
        const store = contentStore();
        for await (const page of store.objects!.list(`${store.prefix}content/`)) listed.push(...page.map((o) => o.key));
      });
      expect(listed.filter((k) => doomed.includes(k))).toEqual([]);
      expect(listed.length).toBeGreaterThan(0);
    }
    // A second sweep finds nothing; the preview agrees.
    expect(await app.deps.withContent!(() => sweepRetention(operatorCtx(app.deps.db, app.deps.config)))).toMatchObject({ sessions: 0 });
    expect((await preview('short')).sessions).toEqual([]);
  }, 180_000);
});
