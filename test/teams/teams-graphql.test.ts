/**
 * Teams through GraphQL: admin / member / viewer / outsider × reads and writes; Project.owner,
 * Session.uploadedBy, SessionFilters.teamIds; searchSessions covers the team's sessions and stops
 * doing so on the request after a removal; a moved project's sessions are found by the new owner's
 * readers and no longer by the old ones (search follows through the outbox).
 */
import crypto from 'node:crypto';
import { startTestApp, type TestApp, type TestUser } from '../support/app';
import { eventually } from '../support/eventually';

let app: TestApp;
let admin: TestUser;
let member: TestUser;
let viewer: TestUser;
let outsider: TestUser;
let teamId: string;
const P = 'gql-team-proj';
const S_ADMIN = crypto.randomUUID();
const S_MEMBER = crypto.randomUUID();

const rest = (u: TestUser, method: string, path: string, body?: unknown) => app.request(method, path, { token: u.token, body });

const searchIds = async (u: TestUser, q: string) => {
  const r = await app.gql(u, 'query($q: String!) { searchSessions(query: $q, limit: 50) { total results { sessionId } } }', { q });
  expect(r.body.errors).toBeUndefined();
  return { total: r.body.data.searchSessions.total as number, ids: r.body.data.searchSessions.results.map((x: any) => x.sessionId) as string[] };
};

beforeAll(async () => {
  app = await startTestApp();
  [admin, member, viewer, outsider] = await Promise.all(['admin', 'member', 'viewer', 'outsider'].map((n) => app.createUser(n)));
  const t = await app.gql(admin, 'mutation { createTeam(name: "Graph") { id name role memberCount } }');
  expect(t.body.data.createTeam).toMatchObject({ name: 'Graph', role: 'ADMIN', memberCount: 1 });
  teamId = t.body.data.createTeam.id;
  for (const [u, role] of [
    [member, 'MEMBER'],
    [viewer, 'VIEWER'],
  ] as const) {
    const r = await app.gql(
      admin,
      'mutation($t: ID!, $e: String!, $r: TeamRole!) { addTeamMember(teamId: $t, email: $e, role: $r) { user { id } email role } }',
      {
        t: teamId,
        e: u.email,
        r: role,
      },
    );
    expect(r.body.data.addTeamMember).toEqual({ user: { id: u.id }, email: u.email, role });
  }
  expect(
    (await app.gql(admin, 'mutation($t: ID) { createProject(input: {id: "gql-team-proj", name: "Team project", teamId: $t}) { id } }', { t: teamId })).body
      .errors,
  ).toBeUndefined();
  expect((await rest(admin, 'PUT', `/api/v1/projects/${P}/sessions/${S_ADMIN}`, { name: 'by admin', markdown: 'zebracorn admin notes' })).status).toBe(201);
  expect((await rest(member, 'PUT', `/api/v1/projects/${P}/sessions/${S_MEMBER}`, { name: 'by member', markdown: 'zebracorn member notes' })).status).toBe(201);
});
afterAll(() => app?.close());

test('every member reads the project with its owner and uploaders; the outsider gets FORBIDDEN', async () => {
  for (const u of [admin, member, viewer]) {
    const r = await app.gql(
      u,
      `{ project(id: "${P}") { id ownerId owner { __typename ... on Team { id name role } } sessions(limit: 10, orderBy: NAME_ASC) { id uploadedBy { id name } } } teams { id } }`,
    );
    expect(r.body.errors).toBeUndefined();
    expect(r.body.data.project.owner).toMatchObject({ __typename: 'Team', id: teamId, name: 'Graph' });
    expect(r.body.data.project.sessions).toEqual([
      { id: S_ADMIN, uploadedBy: { id: admin.id, name: 'admin' } },
      { id: S_MEMBER, uploadedBy: { id: member.id, name: 'member' } },
    ]);
    expect(r.body.data.teams).toEqual([{ id: teamId }]);
  }
  const out = await app.gql(outsider, `{ project(id: "${P}") { id } team(id: "${teamId}") { id } }`);
  expect(out.body.errors.map((e: any) => e.extensions.code).sort()).toEqual(['FORBIDDEN', 'NOT_FOUND']);
  expect(out.body.errors.find((e: any) => e.extensions.code === 'NOT_FOUND').message).toBe('Team not found');
  // Lists, counts and stats cover the team's sessions for members only; teamIds narrows to the team.
  const stats = async (u: TestUser) =>
    (await app.gql(u, `{ stats { totalSessions totalProjects } sessions(filters: {teamIds: ["${teamId}"]}, limit: 10) { id } }`)).body.data;
  expect(await stats(viewer)).toEqual({ stats: { totalSessions: 2, totalProjects: 1 }, sessions: expect.arrayContaining([{ id: S_ADMIN }, { id: S_MEMBER }]) });
  expect(await stats(outsider)).toEqual({ stats: { totalSessions: 0, totalProjects: 0 }, sessions: [] });
  const byUploader = await app.gql(viewer, `{ sessions(filters: {uploaderIds: ["${member.id}"]}) { id } }`);
  expect(byUploader.body.data.sessions).toEqual([{ id: S_MEMBER }]);
});

test('writes: admin everything, member their own sessions, viewer and outsider nothing', async () => {
  const patch = (u: TestUser, id: string) => app.gql(u, `mutation { updateSession(projectId: "${P}", id: "${id}", input: {tags: ["t"]}) { id } }`);
  const code = (r: any) => r.body.errors?.[0]?.extensions?.code ?? 'OK';
  expect(
    [
      await patch(admin, S_MEMBER),
      await patch(member, S_MEMBER),
      await patch(member, S_ADMIN),
      await patch(viewer, S_MEMBER),
      await patch(outsider, S_MEMBER),
    ].map(code),
  ).toEqual(['OK', 'OK', 'FORBIDDEN', 'FORBIDDEN', 'FORBIDDEN']);
  const rename = (u: TestUser) => app.gql(u, `mutation { updateProject(id: "${P}", input: {color: "rose"}) { id } }`);
  expect([await rename(admin), await rename(member), await rename(viewer), await rename(outsider)].map(code)).toEqual([
    'OK',
    'FORBIDDEN',
    'FORBIDDEN',
    'FORBIDDEN',
  ]);
  const roles = (u: TestUser) => app.gql(u, `mutation { setTeamMemberRole(teamId: "${teamId}", userId: "${viewer.id}", role: VIEWER) { role } }`);
  expect([await roles(admin), await roles(member), await roles(outsider)].map(code)).toEqual(['OK', 'FORBIDDEN', 'NOT_FOUND']);
  const last = await app.gql(admin, `mutation { setTeamMemberRole(teamId: "${teamId}", userId: "${admin.id}", role: MEMBER) { role } }`);
  expect(last.body.errors[0]).toMatchObject({ message: 'A team needs at least one admin', extensions: { code: 'CONFLICT' } });
  const del = await app.gql(admin, `mutation { deleteTeam(id: "${teamId}") }`);
  expect(del.body.errors[0]).toMatchObject({ message: "Move or delete the team's 1 project first", extensions: { code: 'CONFLICT' } });
  const inv = await app.gql(admin, `mutation { createTeamInvitation(teamId: "${teamId}", role: MEMBER) { invitation { id role } url } }`);
  expect(inv.body.data.createTeamInvitation.invitation.role).toBe('MEMBER');
  // The link starts with the origin the request came to, as REST's does (not the listen address).
  expect(inv.body.data.createTeamInvitation.url).toMatch(new RegExp(`^${app.url.replace(/[.]/g, '\\.')}/join\\?token=[\\w-]{40,}$`));
  expect((await app.gql(admin, `{ team(id: "${teamId}") { invitations { id } members { role } } }`)).body.data.team.invitations).toHaveLength(1);
  expect(
    (await app.gql(admin, `mutation { revokeTeamInvitation(teamId: "${teamId}", id: "${inv.body.data.createTeamInvitation.invitation.id}") }`)).body.data
      .revokeTeamInvitation,
  ).toBe(true);
});

test('search covers the team for members, and a removal or a move applies from the next request', async () => {
  await eventually('both sessions found by the viewer', async () => (await searchIds(viewer, 'zebracorn')).ids.length === 2, 60_000);
  expect(await searchIds(outsider, 'zebracorn')).toEqual({ total: 0, ids: [] });
  // Removed: the very next search finds and counts none of the team's sessions.
  expect((await app.gql(admin, `mutation { removeTeamMember(teamId: "${teamId}", userId: "${viewer.id}") }`)).body.data.removeTeamMember).toBe(true);
  expect(await searchIds(viewer, 'zebracorn')).toEqual({ total: 0, ids: [] });
  // Moved to the admin personally: the member no longer finds it; the admin still does.
  const moved = await app.gql(admin, `mutation { moveProject(id: "${P}", teamId: null) { owner { __typename ... on User { id } } } }`);
  expect(moved.body.data.moveProject.owner).toEqual({ __typename: 'User', id: admin.id });
  expect((await searchIds(member, 'zebracorn')).ids).toEqual([]);
  await eventually('the admin finds both after the move', async () => (await searchIds(admin, 'zebracorn')).ids.length === 2, 60_000);
  // And back into the team: the member finds them again once the index follows.
  expect((await app.gql(admin, `mutation { moveProject(id: "${P}", teamId: "${teamId}") { ownerId } }`)).body.data.moveProject.ownerId).toBe(teamId);
  await eventually('the member finds both after the move back', async () => (await searchIds(member, 'zebracorn')).ids.length === 2, 60_000);
});
