/**
 * Retention and legal hold as settings: PATCH of a project and a team takes `retentionDays`
 * (integer ≥ 1 or null) and `legalHold` (instance administrators only), both come back in the
 * project and team objects over REST and GraphQL; who may set what.
 */
import { startTestApp, type TestApp, type TestUser } from '../support/app';
import { operatorCtx } from '../../src/services/context';
import { createUser } from '../../src/services/users';

let app: TestApp;
let ada: TestUser;
let bob: TestUser;
let root: TestUser;

beforeAll(async () => {
  app = await startTestApp();
  ada = await app.createUser('ada');
  bob = await app.createUser('bob');
  const admin = await createUser(operatorCtx(app.deps.db), 'root@example.com', 'Root', { role: 'admin' });
  root = { id: admin.id, email: admin.email, ...(await app.newKey(admin)) };
});
afterAll(() => app?.close());

const req = (u: { token: string }, method: string, path: string, body?: unknown) => app.request(method, path, { token: u.token, body });

test('a project starts kept and off hold; its owner sets and clears retention, only an administrator sets the hold', async () => {
  expect((await req(ada, 'POST', '/api/v1/projects', { id: 'ret-a', name: 'A' })).status).toBe(201);
  const fresh = await req(ada, 'GET', '/api/v1/projects/ret-a');
  expect(fresh.body.data.project).toMatchObject({ retentionDays: null, legalHold: false });

  const set = await req(ada, 'PATCH', '/api/v1/projects/ret-a', { retentionDays: 30 });
  expect(set.status).toBe(200);
  expect(set.body.data).toMatchObject({ id: 'ret-a', name: 'A', retentionDays: 30, legalHold: false });

  for (const bad of [0, -1, 1.5, '30', 36501, true]) {
    const r = await req(ada, 'PATCH', '/api/v1/projects/ret-a', { retentionDays: bad });
    expect([r.status, r.body.error]).toEqual([400, 'Invalid value for retentionDays: must be an integer between 1 and 36500, or null']);
  }
  const badHold = await req(root, 'PATCH', '/api/v1/projects/ret-a', { legalHold: 'yes' });
  expect([badHold.status, badHold.body.error]).toEqual([400, 'Invalid type for legalHold: expected a boolean']);

  const hold = await req(ada, 'PATCH', '/api/v1/projects/ret-a', { legalHold: true });
  expect([hold.status, hold.body.error]).toEqual([403, 'Only instance administrators can set or lift a legal hold']);
  const other = await req(bob, 'PATCH', '/api/v1/projects/ret-a', { retentionDays: 1 });
  expect(other.status).toBe(403);

  // An administrator holds a project they cannot otherwise read, and is answered with it.
  const held = await req(root, 'PATCH', '/api/v1/projects/ret-a', { legalHold: true });
  expect(held.status).toBe(200);
  expect(held.body.data).toMatchObject({ id: 'ret-a', retentionDays: 30, legalHold: true });
  expect((await req(root, 'PATCH', '/api/v1/projects/nope', { legalHold: true })).status).toBe(404);

  const cleared = await req(ada, 'PATCH', '/api/v1/projects/ret-a', { retentionDays: null });
  expect(cleared.body.data).toMatchObject({ retentionDays: null, legalHold: true });
  const list = await req(ada, 'GET', '/api/v1/projects');
  expect(list.body.data.projects.find((p: { id: string }) => p.id === 'ret-a')).toMatchObject({ retentionDays: null, legalHold: true });

  const gql = await app.gql(ada, 'query { project(id: "ret-a") { retentionDays legalHold } }');
  expect(gql.body.data.project).toEqual({ retentionDays: null, legalHold: true });
  const viaGql = await app.gql(ada, 'mutation { updateProject(id: "ret-a", input: { retentionDays: 7 }) { retentionDays legalHold } }');
  expect(viaGql.body.data.updateProject).toEqual({ retentionDays: 7, legalHold: true });
  const refused = await app.gql(ada, 'mutation { updateProject(id: "ret-a", input: { legalHold: false }) { legalHold } }');
  expect(refused.body.errors[0]).toMatchObject({ message: 'Only instance administrators can set or lift a legal hold', extensions: { code: 'FORBIDDEN' } });
});

test("a team's admins set its retention, a member cannot; an instance administrator sets its hold, a member of the team or not", async () => {
  const created = await req(ada, 'POST', '/api/v1/teams', { name: 'Legal' });
  const teamId = created.body.data.team.id;
  expect(created.body.data.team).toMatchObject({ retentionDays: null, legalHold: false });
  expect((await req(ada, 'POST', `/api/v1/teams/${teamId}/members`, { email: bob.email, role: 'member' })).status).toBe(201);

  const set = await req(ada, 'PATCH', `/api/v1/teams/${teamId}`, { retentionDays: 90 });
  expect(set.status).toBe(200);
  expect(set.body.data.team).toMatchObject({ name: 'Legal', retentionDays: 90, legalHold: false });
  const member = await req(bob, 'PATCH', `/api/v1/teams/${teamId}`, { retentionDays: 1 });
  expect([member.status, member.body.error]).toEqual([403, "Only the team's admins can change the team's retention"]);
  const nothing = await req(ada, 'PATCH', `/api/v1/teams/${teamId}`, {});
  expect([nothing.status, nothing.body.error]).toEqual([400, 'Nothing to update: send name, retentionDays or legalHold']);
  const renamed = await req(ada, 'PATCH', `/api/v1/teams/${teamId}`, { name: 'Legal 2' });
  expect(renamed.body.data.team).toMatchObject({ name: 'Legal 2', retentionDays: 90 });

  // The team's own admin cannot; neither can someone outside it (403 before anything is read of the team).
  const hold = await req(ada, 'PATCH', `/api/v1/teams/${teamId}`, { legalHold: true });
  expect([hold.status, hold.body.error]).toEqual([403, 'Only instance administrators can set or lift a legal hold']);
  const outsider = await app.createUser('outsider');
  expect((await req(outsider, 'PATCH', `/api/v1/teams/${teamId}`, { legalHold: true })).status).toBe(403);
  expect((await req(outsider, 'PATCH', '/api/v1/teams/no-such-team', { legalHold: true })).status).toBe(403);
  // An instance administrator who is not a member sets it (and lifts it); their role in the team: none.
  const held = await req(root, 'PATCH', `/api/v1/teams/${teamId}`, { legalHold: true });
  expect(held.status).toBe(200);
  expect(held.body.data.team).toMatchObject({ id: teamId, name: 'Legal 2', legalHold: true, role: null, memberCount: 2 });
  expect((await req(root, 'PATCH', `/api/v1/teams/${teamId}`, { legalHold: false })).body.data.team).toMatchObject({ legalHold: false, role: null });
  expect((await req(root, 'PATCH', '/api/v1/teams/no-such-team', { legalHold: true })).status).toBe(404);
  // A name or retention still needs an admin of the team: not a member → not found.
  expect((await req(root, 'PATCH', `/api/v1/teams/${teamId}`, { name: 'Taken', legalHold: true })).status).toBe(404);
  expect((await req(root, 'PATCH', `/api/v1/teams/${teamId}`, { retentionDays: 5 })).status).toBe(404);
  // GraphQL's updateTeam answers with the team as a member sees it: for its members only.
  const gqlOutside = await app.gql(root, `mutation { updateTeam(id: "${teamId}", input: { legalHold: true }) { legalHold } }`);
  expect(gqlOutside.body.errors?.[0]).toMatchObject({ message: 'Team not found', extensions: { code: 'NOT_FOUND' } });
  expect((await req(root, 'PATCH', `/api/v1/teams/${teamId}`, { legalHold: true })).body.data.team.legalHold).toBe(true);
  expect((await req(ada, 'POST', `/api/v1/teams/${teamId}/members`, { email: root.email, role: 'viewer' })).status).toBe(201);
  const asMember = await req(root, 'PATCH', `/api/v1/teams/${teamId}`, { legalHold: true });
  expect(asMember.body.data.team).toMatchObject({ legalHold: true, role: 'viewer' });

  const gql = await app.gql(bob, `query { team(id: "${teamId}") { retentionDays legalHold } }`);
  expect(gql.body.data.team).toEqual({ retentionDays: 90, legalHold: true });
  const viaGql = await app.gql(ada, `mutation { updateTeam(id: "${teamId}", input: { retentionDays: null }) { retentionDays legalHold } }`);
  expect(viaGql.body.data.updateTeam).toEqual({ retentionDays: null, legalHold: true });
});
