/**
 * Legal hold stops every deletion path with 409 `Project is on legal hold`: a session's delete
 * and a project's over REST and GraphQL (the console calls these), a team's delete, an import that
 * may replace sessions (REST and the admin CLI's), and a session that is due for retention (the
 * sweep: test/operations/retention-sweep.test.ts), and a user's delete while any of their own
 * projects is held. A hold on a team holds its projects. The user delete is the only operation
 * under /users that deletes: checked here too, so that one added later has to join this list.
 * Lifting the hold lets the deletes through again.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startTestApp, SID, type TestApp, type TestUser } from '../support/app';
import { buildArchive } from '../support/archive';
import { runCli } from '../support/cli';
import { openApiDocument } from '../../src/api/openapi';
import { operatorCtx } from '../../src/services/context';
import { createUser } from '../../src/services/users';

let app: TestApp;
let ada: TestUser;
let root: TestUser;
let dir: string;

beforeAll(async () => {
  app = await startTestApp();
  ada = await app.createUser('ada');
  const admin = await createUser(operatorCtx(app.deps.db), 'root@example.com', 'Root', { role: 'admin' });
  root = { id: admin.id, email: admin.email, ...(await app.newKey(admin)) };
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sa-legal-hold-'));
});
afterAll(async () => {
  fs.rmSync(dir, { recursive: true, force: true });
  await app?.close();
});

const req = (u: { token: string }, method: string, p: string, body?: unknown) => app.request(method, p, { token: u.token, body });
const ON_HOLD = 'Project is on legal hold';
const refused = (r: { status: number; body: any }) => expect([r.status, r.body.error]).toEqual([409, ON_HOLD]);
const gqlRefused = (r: { body: any }) => expect(r.body.errors?.[0]).toMatchObject({ message: ON_HOLD, extensions: { code: 'CONFLICT' } });
const sessionCount = async (projectId: string) => (await req(ada, 'GET', `/api/v1/projects/${projectId}`)).body.data.project.sessionCount;

test('a held project: session and project deletes over REST and GraphQL, and imports that replace, are refused', async () => {
  await app.upload(ada, 'held', SID(1), { name: 'one', markdown: '# one' });
  await app.upload(ada, 'held', SID(2), { name: 'two', markdown: '# two' });
  expect((await req(root, 'PATCH', '/api/v1/projects/held', { legalHold: true })).status).toBe(200);

  refused(await req(ada, 'DELETE', `/api/v1/projects/held/sessions/${SID(1)}`));
  gqlRefused(await app.gql(ada, `mutation { deleteSession(projectId: "held", id: "${SID(1)}") }`));
  refused(await req(ada, 'DELETE', '/api/v1/projects/held'));
  gqlRefused(await app.gql(ada, 'mutation { deleteProject(id: "held") { deletedAt } }'));

  const archive = await buildArchive([{ id: 'held', sessions: [{ id: SID(1), markdown: '# replaced' }] }]);
  const tar = { 'Content-Type': 'application/x-tar' };
  for (const mode of ['overwrite', 'newer']) {
    refused(await app.request('POST', `/api/v1/import?onConflict=${mode}`, { token: ada.token, body: archive, headers: tar }));
  }
  const file = path.join(dir, 'held.tar');
  fs.writeFileSync(file, archive);
  const cli = await runCli(['import', file, '--email', ada.email, '--on-conflict', 'overwrite'], { databaseUrl: app.db.url, env: app.storeEnv });
  expect(cli.code).not.toBe(0);
  expect(cli.stderr).toContain(ON_HOLD);
  // Skipping what exists replaces nothing: allowed.
  const skip = await app.request('POST', '/api/v1/import?onConflict=skip', { token: ada.token, body: archive, headers: tar });
  expect(skip.status).toBe(200);
  expect(skip.body.data.sessions).toMatchObject({ skipped: 1, updated: 0 });

  expect(await sessionCount('held')).toBe(2);
  const md = await app.request('GET', `/api/v1/projects/held/sessions/${SID(1)}`, { token: ada.token, headers: { Accept: 'text/markdown' } });
  expect(md.text).toContain('# one');

  // Lifted: the same deletes go through.
  expect((await req(root, 'PATCH', '/api/v1/projects/held', { legalHold: false })).status).toBe(200);
  expect((await req(ada, 'DELETE', `/api/v1/projects/held/sessions/${SID(1)}`)).status).toBe(200);
  expect((await req(ada, 'DELETE', '/api/v1/projects/held')).status).toBe(200);
}, 120_000);

test("a held team holds its projects' sessions and is not deleted", async () => {
  const teamId = (await req(ada, 'POST', '/api/v1/teams', { name: 'Held' })).body.data.team.id;
  expect((await req(ada, 'POST', '/api/v1/projects', { id: 'team-held', name: 'T', teamId })).status).toBe(201);
  await app.upload(ada, 'team-held', SID(3), { name: 'three', markdown: '# three' });
  expect((await req(root, 'PATCH', `/api/v1/teams/${teamId}`, { legalHold: true })).status).toBe(200);

  refused(await req(ada, 'DELETE', `/api/v1/projects/team-held/sessions/${SID(3)}`));
  gqlRefused(await app.gql(ada, `mutation { deleteSession(projectId: "team-held", id: "${SID(3)}") }`));
  refused(await req(ada, 'DELETE', '/api/v1/projects/team-held'));
  const archive = await buildArchive([{ id: 'team-held', sessions: [{ id: SID(3) }] }]);
  refused(
    await app.request('POST', `/api/v1/import?onConflict=overwrite&teamId=${teamId}`, {
      token: ada.token,
      body: archive,
      headers: { 'Content-Type': 'application/x-tar' },
    }),
  );

  // A held team without projects is not deleted either (REST and GraphQL).
  const empty = (await req(ada, 'POST', '/api/v1/teams', { name: 'Empty' })).body.data.team.id;
  expect((await req(root, 'PATCH', `/api/v1/teams/${empty}`, { legalHold: true })).status).toBe(200);
  refused(await req(ada, 'DELETE', `/api/v1/teams/${empty}`));
  gqlRefused(await app.gql(ada, `mutation { deleteTeam(id: "${empty}") }`));

  expect(await sessionCount('team-held')).toBe(1);
  expect((await req(root, 'PATCH', `/api/v1/teams/${empty}`, { legalHold: false })).status).toBe(200);
  expect((await req(ada, 'DELETE', `/api/v1/teams/${empty}`)).status).toBe(200);
}, 120_000);

test('a user with a held project is not deleted, nor anything of theirs; lifted, the delete goes through', async () => {
  const cy = await app.createUser('cy');
  await app.upload(cy, 'cy-free', SID(5), { name: 'five', markdown: '# five' });
  await app.upload(cy, 'cy-held', SID(6), { name: 'six', markdown: '# six' });
  expect((await req(root, 'PATCH', '/api/v1/projects/cy-held', { legalHold: true })).status).toBe(200);

  refused(await req(root, 'DELETE', `/api/v1/users/${cy.id}`));
  // Nothing went, not even the project that is not held (checked before the first deletion).
  const mine = (await req(cy, 'GET', '/api/v1/projects')).body.data.projects;
  expect(mine.map((p: { id: string; sessionCount: number }) => [p.id, p.sessionCount]).sort()).toEqual([
    ['cy-free', 1],
    ['cy-held', 1],
  ]);

  expect((await req(root, 'PATCH', '/api/v1/projects/cy-held', { legalHold: false })).status).toBe(200);
  expect((await req(root, 'DELETE', `/api/v1/users/${cy.id}`)).body.data).toMatchObject({ projects: 2, sessions: 2 });
  expect((await req(cy, 'GET', '/api/v1/projects')).status).toBe(401);
}, 60_000);

test("a held team does not stop its member's delete: the team's projects stay with it, held", async () => {
  const dee = await app.createUser('dee');
  const teamId = (await req(ada, 'POST', '/api/v1/teams', { name: 'Held too' })).body.data.team.id;
  expect((await req(ada, 'POST', `/api/v1/teams/${teamId}/members`, { email: dee.email, role: 'member' })).status).toBe(201);
  expect((await req(ada, 'POST', '/api/v1/projects', { id: 'team-held-2', name: 'T2', teamId })).status).toBe(201);
  await app.upload(dee, 'team-held-2', SID(7), { name: 'seven', markdown: '# seven' });
  expect((await req(root, 'PATCH', `/api/v1/teams/${teamId}`, { legalHold: true })).status).toBe(200);

  expect((await req(root, 'DELETE', `/api/v1/users/${dee.id}`)).body.data).toEqual({ userId: dee.id, projects: 0, sessions: 0, teams: 1 });
  expect(await sessionCount('team-held-2')).toBe(1);
}, 60_000);

test('the user delete is the only deleting operation under /users', () => {
  const doc = openApiDocument() as { paths: Record<string, Record<string, unknown>> };
  const userDeletes = Object.entries(doc.paths)
    .filter(([p, ops]) => p.startsWith('/users') && 'delete' in ops)
    .map(([p]) => p);
  expect(userDeletes).toEqual(['/users/{userId}']);
});
