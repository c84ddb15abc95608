/**
 * Teams over REST: two teammates whose upload CLIs are logged in for the team (device login with
 * `teamId`, then the CLI's exact sizes / HEAD / gzip PUT requests) sync one repository into one
 * project and each sees both's sessions; the 403 of an upload into another account's project;
 * teams CRUD with its exact messages; invitations (sign-up off); moving projects both ways.
 */
import crypto from 'node:crypto';
import { startTestApp, type TestApp, type TestUser } from '../support/app';
import { browser } from '../support/cookie-client';
import { eventually } from '../support/eventually';
import { operatorCtx } from '../../src/services/context';
import { createUser } from '../../src/services/users';
import { resolveBrowserSession } from '../../src/services/browser-sessions';
import { cliBare, cliPut, CLI_USER_AGENT, CLI_VERSION, requiresSyncBulk, requiresSyncHead, type CliUpload } from '../support/specstory-clients';

let app: TestApp;
let ada: TestUser;
let bob: TestUser;
let eve: TestUser;

beforeAll(async () => {
  app = await startTestApp();
  ada = await app.createUser('ada');
  bob = await app.createUser('bob');
  eve = await app.createUser('eve');
});
afterAll(() => app?.close());

const req = (u: { token: string }, method: string, path: string, body?: unknown) => app.request(method, path, { token: u.token, body });

async function newTeam(owner: TestUser, name = 'Platform'): Promise<string> {
  const r = await req(owner, 'POST', '/api/v1/teams', { name });
  expect(r.status).toBe(201);
  return r.body.data.team.id;
}

async function addMember(admin: TestUser, teamId: string, user: TestUser, role: string) {
  const r = await req(admin, 'POST', `/api/v1/teams/${teamId}/members`, { email: user.email, role });
  expect(r.status).toBe(201);
  return r.body.data.member;
}

/** The upload CLI's device login for a team: a code asked for with `teamId`, exchanged, refreshed. */
async function cliLoginForTeam(user: TestUser, teamId: string | null): Promise<string> {
  const code = await req(user, 'POST', '/api/v1/device-codes', teamId === null ? {} : { teamId });
  expect(code.status).toBe(201);
  expect(Object.keys(code.body.data).sort()).toEqual(['code', 'expiresAt']);
  const login = await app.request('POST', '/api/v1/device-login', {
    body: { device_code: code.body.data.code, hostname: 'laptop', os: 'linux', client: 'specstory-cli', client_version: CLI_VERSION },
    headers: { Accept: 'application/json', 'User-Agent': CLI_USER_AGENT },
  });
  expect(login.status).toBe(200);
  const refresh = await app.request('POST', '/api/v1/device-refresh', {
    headers: { Authorization: `Bearer ${login.body.refreshToken}`, Accept: 'application/json', 'User-Agent': CLI_USER_AGENT },
  });
  expect(refresh.status).toBe(200);
  return refresh.body.accessToken;
}

const upload = (projectId: string, markdown: string): CliUpload => ({
  projectId,
  projectName: 'app',
  name: `session ${markdown.slice(0, 10)}`,
  markdown,
  rawData: '{"type":"user"}\n',
  sessionData: '{"schemaVersion":"1.0"}',
  metadata: { clientName: 'specstory-cli', clientVersion: CLI_VERSION, agentName: 'Claude Code', deviceId: 'dev' },
});

/** One session synced as the CLI does it: sizes, then HEAD when needed, then the gzip PUT. */
async function cliSync(token: string, projectId: string, sessionId: string, markdown: string) {
  const sizes = await cliBare(app, token, 'GET', `/api/v1/projects/${projectId}/sessions/sizes`);
  expect(sizes.status).toBe(200);
  if (!requiresSyncBulk(sizes.body.data.sessions, sessionId, markdown)) return { sizes, put: null };
  const head = await cliBare(app, token, 'HEAD', `/api/v1/projects/${projectId}/sessions/${sessionId}`);
  if (!requiresSyncHead(head, markdown)) return { sizes, put: null };
  const put = await cliPut(app, token, projectId, sessionId, upload(projectId, markdown));
  return { sizes, put };
}

describe('two teammates sync one repository into one team project', () => {
  const repo = 'a1b2-c3d4-e5f6-0789';
  const adaSession = crypto.randomUUID();
  const bobSession = crypto.randomUUID();
  let teamId: string;
  let adaCli: string;
  let bobCli: string;

  beforeAll(async () => {
    teamId = await newTeam(ada);
    await addMember(ada, teamId, bob, 'member');
    adaCli = await cliLoginForTeam(ada, teamId);
    bobCli = await cliLoginForTeam(bob, teamId);
  });

  test('the first sync creates the project for the team; the second teammate syncs into it', async () => {
    const first = await cliSync(adaCli, repo, adaSession, '# Ada\n\nfirst teammate\n');
    expect(first.sizes.body.data.sessions).toEqual({});
    expect(first.put?.status).toBe(201);
    const second = await cliSync(bobCli, repo, bobSession, '# Bob\n\nsecond teammate\n');
    // The whole project is listed to the team's members.
    expect(Object.keys(second.sizes.body.data.sessions)).toEqual(expect.arrayContaining([adaSession, `${adaSession}:sessionData`]));
    expect(second.put?.status).toBe(201);

    const project = (await req(bob, 'GET', `/api/v1/projects/${repo}`)).body.data.project;
    expect(project).toMatchObject({ id: repo, ownerId: teamId, owner: { type: 'team', id: teamId, name: 'Platform' }, sessionCount: 2 });
    for (const u of [ada, bob]) {
      const list = await req(u, 'GET', `/api/v1/projects/${repo}/sessions`);
      expect(list.status).toBe(200);
      const byId = Object.fromEntries(list.body.data.sessions.map((s: any) => [s.id, s.uploadedBy]));
      expect(byId).toEqual({ [adaSession]: { id: ada.id, name: 'ada' }, [bobSession]: { id: bob.id, name: 'bob' } });
    }
    // A repeated sync sends nothing.
    expect((await cliSync(bobCli, repo, bobSession, '# Bob\n\nsecond teammate\n')).put).toBeNull();
  });

  test("an outsider's upload into the team's project: 403 saying how to fix it; their sizes: 403", async () => {
    const r = await cliPut(app, eve.token, repo, crypto.randomUUID(), upload(repo, '# Eve'));
    expect(r.status).toBe(403);
    expect(r.body.error).toMatch(new RegExp(`^Project ${repo} belongs to another account\\. .*move it into a team you share.*log the client in for that team`));
    expect((await cliBare(app, eve.token, 'GET', `/api/v1/projects/${repo}/sessions/sizes`)).status).toBe(403);
  });

  test('a member changes only the sessions they uploaded; an admin changes any', async () => {
    expect((await req(bob, 'PATCH', `/api/v1/projects/${repo}/sessions/${adaSession}`, { name: 'x' })).status).toBe(403);
    expect((await req(bob, 'DELETE', `/api/v1/projects/${repo}/sessions/${adaSession}`)).status).toBe(403);
    expect((await cliPut(app, bobCli, repo, adaSession, upload(repo, '# overwritten'))).status).toBe(403);
    expect((await req(bob, 'PATCH', `/api/v1/projects/${repo}/sessions/${bobSession}`, { tags: ['bob'] })).status).toBe(200);
    expect((await req(ada, 'PATCH', `/api/v1/projects/${repo}/sessions/${bobSession}`, { name: 'by admin' })).status).toBe(200);
    // Project settings, moving and deleting are the admins'.
    expect((await req(bob, 'PATCH', `/api/v1/projects/${repo}`, { name: 'Renamed' })).status).toBe(403);
    expect((await req(bob, 'DELETE', `/api/v1/projects/${repo}`)).status).toBe(403);
    expect((await req(bob, 'POST', `/api/v1/projects/${repo}/move`, { teamId: null })).status).toBe(403);
    expect((await req(ada, 'PATCH', `/api/v1/projects/${repo}`, { color: 'rose' })).status).toBe(200);
  });

  test('deleting a team that owns projects → 409 with the count', async () => {
    const r = await req(ada, 'DELETE', `/api/v1/teams/${teamId}`);
    expect(r).toMatchObject({ status: 409, body: { success: false, error: "Move or delete the team's 1 project first" } });
  });

  test('removing a member takes effect on the next request', async () => {
    expect((await req(ada, 'DELETE', `/api/v1/teams/${teamId}/members/${bob.id}`)).status).toBe(200);
    expect((await req(bob, 'GET', `/api/v1/projects/${repo}`)).status).toBe(403);
    expect((await req(bob, 'GET', '/api/v1/projects')).body.data.projects.map((p: any) => p.id)).not.toContain(repo);
    expect((await cliPut(app, bobCli, repo, crypto.randomUUID(), upload(repo, '# after'))).status).toBe(403);
    // Their CLI, still bound to the team, can no longer create projects there.
    const stale = await cliPut(app, bobCli, 'bob-new-repo', crypto.randomUUID(), upload('bob-new-repo', '# new'));
    expect(stale).toMatchObject({
      status: 403,
      body: { error: expect.stringMatching(/^This client is logged in for a team where you can no longer create projects\./) },
    });
  });
});

describe('signed in with a browser session', () => {
  test('memberships come with the session: a demotion, a removal and an addition apply from the next request, search included', async () => {
    const password = 'correct horse battery';
    const email = `carol-${crypto.randomBytes(4).toString('hex')}@example.test`;
    const carol = await createUser(operatorCtx(app.deps.db), email, 'carol', { password });
    const b = browser(app);
    expect((await b.signIn(email, password)).status).toBe(200);
    const teamId = await newTeam(ada, 'Cookies');
    const P = `cookie-${crypto.randomBytes(4).toString('hex')}`;
    expect((await req(ada, 'POST', '/api/v1/projects', { id: P, name: P, teamId })).status).toBe(201);
    const word = Array.from(crypto.randomBytes(12), (x) => String.fromCharCode(97 + (x % 26))).join('');
    const S = crypto.randomUUID();
    expect((await req(ada, 'PUT', `/api/v1/projects/${P}/sessions/${S}`, { name: 'by ada', markdown: `# ada\n\n${word}` })).status).toBe(201);
    const put = () => b.request('PUT', `/api/v1/projects/${P}/sessions/${crypto.randomUUID()}`, { body: { name: 'by carol', markdown: '# carol' } });
    const ask = () =>
      b.request('POST', '/api/v1/graphql', {
        body: { query: 'query($q: String!) { searchSessions(query: $q) { total results { sessionId } } }', variables: { q: word } },
      });
    const search = async () => {
      const r = await ask();
      expect([r.status, r.body.errors]).toEqual([200, undefined]);
      return r.body.data.searchSessions as { total: number; results: Array<{ sessionId: string }> };
    };

    // Not a member yet: the cookie reads nothing of the team.
    expect((await b.request('GET', `/api/v1/projects/${P}`)).status).toBe(403);
    expect((await put()).status).toBe(403);
    await addMember(ada, teamId, { email } as TestUser, 'member');
    // Read with the session itself, in the statement that authenticates the request.
    expect((await resolveBrowserSession(app.deps.db.reads, b.cookie!))?.memberships).toBe(`${teamId}:member`);
    expect((await b.request('GET', `/api/v1/projects/${P}`)).status).toBe(200);
    expect((await put()).status).toBe(201);
    // Until indexed (the engine may still be starting: a 503 meanwhile is retried too).
    await eventually('the team session to be found', async () => (await ask()).body.data?.searchSessions?.total === 1, 60_000);
    expect((await search()).results.map((r) => r.sessionId)).toEqual([S]);

    expect((await req(ada, 'PATCH', `/api/v1/teams/${teamId}/members/${carol.id}`, { role: 'viewer' })).status).toBe(200);
    expect((await put()).status).toBe(403);
    expect((await b.request('GET', `/api/v1/projects/${P}`)).status).toBe(200);

    expect((await req(ada, 'DELETE', `/api/v1/teams/${teamId}/members/${carol.id}`)).status).toBe(200);
    expect((await b.request('GET', `/api/v1/projects/${P}`)).status).toBe(403);
    expect(await search()).toEqual({ total: 0, results: [] });
  }, 90_000);
});

describe('teams: CRUD, roles and their messages', () => {
  test('create, list, get, rename; unknown or foreign team → 404 Team not found', async () => {
    const teamId = await newTeam(ada, 'Data');
    const list = await req(ada, 'GET', '/api/v1/teams');
    expect(list.body.data.teams).toEqual(
      expect.arrayContaining([expect.objectContaining({ id: teamId, name: 'Data', role: 'admin', memberCount: 1, projectCount: 0 })]),
    );
    expect((await req(ada, 'PATCH', `/api/v1/teams/${teamId}`, { name: 'Data & ML' })).body.data.team.name).toBe('Data & ML');
    for (const [method, path, body] of [
      ['GET', `/api/v1/teams/${teamId}`],
      ['PATCH', `/api/v1/teams/${teamId}`, { name: 'x' }],
      ['DELETE', `/api/v1/teams/${teamId}`],
      ['POST', `/api/v1/teams/${teamId}/members`, { email: eve.email, role: 'admin' }],
      ['POST', `/api/v1/teams/${teamId}/invitations`, { role: 'admin' }],
      ['POST', '/api/v1/keys', { name: 'k', teamId }],
      ['POST', '/api/v1/device-codes', { teamId }],
      ['POST', '/api/v1/projects', { name: 'p', teamId }],
    ] as Array<[string, string, unknown?]>) {
      const r = await req(eve, method, path, body);
      expect([method, path, r.status, r.body]).toEqual([method, path, 404, { success: false, error: 'Team not found' }]);
    }
    expect((await req(ada, 'GET', '/api/v1/teams/no-such-team')).status).toBe(404);
    expect((await req(ada, 'POST', '/api/v1/teams', { name: '' })).status).toBe(400);
    expect((await req(ada, 'POST', '/api/v1/teams', { name: 'x'.repeat(101) })).status).toBe(400);
  });

  test('bad role → 400 listing the roles; unknown email → 404; the last admin stays (409)', async () => {
    const teamId = await newTeam(ada, 'Roles');
    const bad = await req(ada, 'POST', `/api/v1/teams/${teamId}/members`, { email: bob.email, role: 'owner' });
    expect(bad).toMatchObject({ status: 400, body: { error: 'Invalid value for role. Must be one of: admin, member, viewer' } });
    expect(await req(ada, 'POST', `/api/v1/teams/${teamId}/members`, { email: 'nobody@example.test', role: 'member' })).toMatchObject({
      status: 404,
      body: { error: 'No user with that email' },
    });
    await addMember(ada, teamId, bob, 'viewer');
    expect((await req(ada, 'POST', `/api/v1/teams/${teamId}/members`, { email: bob.email, role: 'member' })).status).toBe(409);
    const last = { status: 409, body: { success: false, error: 'A team needs at least one admin' } };
    expect(await req(ada, 'PATCH', `/api/v1/teams/${teamId}/members/${ada.id}`, { role: 'member' })).toMatchObject(last);
    expect(await req(ada, 'DELETE', `/api/v1/teams/${teamId}/members/${ada.id}`)).toMatchObject(last);
    expect((await req(ada, 'PATCH', `/api/v1/teams/${teamId}/members/${bob.id}`, { role: 'superuser' })).status).toBe(400);
    // A viewer cannot bind credentials to the team or create projects in it, and manages nothing.
    expect((await req(bob, 'POST', '/api/v1/keys', { name: 'k', teamId })).status).toBe(403);
    expect((await req(bob, 'POST', '/api/v1/device-codes', { teamId })).status).toBe(403);
    expect((await req(bob, 'POST', '/api/v1/projects', { name: 'p', teamId })).status).toBe(403);
    expect((await req(bob, 'PATCH', `/api/v1/teams/${teamId}`, { name: 'mine' })).status).toBe(403);
    // Promoted, then the first admin can step down; the viewer-turned-admin can leave only while another admin stays.
    expect((await req(ada, 'PATCH', `/api/v1/teams/${teamId}/members/${bob.id}`, { role: 'admin' })).body.data.member).toMatchObject({
      user: { id: bob.id },
      role: 'admin',
    });
    expect((await req(ada, 'DELETE', `/api/v1/teams/${teamId}/members/${ada.id}`)).status).toBe(200);
    expect(await req(bob, 'DELETE', `/api/v1/teams/${teamId}/members/${bob.id}`)).toMatchObject(last);
    expect((await req(bob, 'DELETE', `/api/v1/teams/${teamId}`)).status).toBe(200);
    expect((await req(bob, 'GET', `/api/v1/teams/${teamId}`)).status).toBe(404);
  });

  test('a key bound to a team: its new projects are the team’s; POST /projects with teamId null stays personal', async () => {
    const teamId = await newTeam(ada, 'Keys');
    const key = await req(ada, 'POST', '/api/v1/keys', { name: 'team key', teamId });
    expect(key.status).toBe(201);
    expect(key.body.data.key.teamId).toBe(teamId);
    const tk = { token: key.body.data.token };
    const p1 = await req(tk, 'POST', '/api/v1/projects', { id: 'keys-team-proj', name: 'T' });
    expect(p1.body.data.project.owner).toEqual({ type: 'team', id: teamId, name: 'Keys' });
    const p2 = await req(tk, 'POST', '/api/v1/projects', { id: 'keys-own-proj', name: 'O', teamId: null });
    expect(p2.body.data.project.owner).toMatchObject({ type: 'user', id: ada.id });
    const put = await req(tk, 'PUT', `/api/v1/projects/keys-upload-proj/sessions/${crypto.randomUUID()}`, { name: 's', markdown: 'm' });
    expect(put.status).toBe(201);
    expect((await req(ada, 'GET', '/api/v1/projects/keys-upload-proj')).body.data.project.ownerId).toBe(teamId);
    expect((await req(ada, 'GET', '/api/v1/keys')).body.data.keys.find((k: any) => k.id === key.body.data.key.id).teamId).toBe(teamId);
  });

  test('TEAMS=admins: only instance admins create teams', async () => {
    const other = await startTestApp({ env: { TEAMS: 'admins' } });
    try {
      const u = await other.createUser('plain');
      expect(await other.request('POST', '/api/v1/teams', { token: u.token, body: { name: 'x' } })).toMatchObject({
        status: 403,
        body: { error: 'Only administrators can create teams' },
      });
    } finally {
      await other.close();
    }
  });
});

describe('invitations', () => {
  test('a one-time link, 7 days; an account created through it with sign-up off; revoked and used links refused', async () => {
    const teamId = await newTeam(ada, 'Invites');
    const inv = await req(ada, 'POST', `/api/v1/teams/${teamId}/invitations`, { role: 'member', email: 'newcomer@example.test' });
    expect(inv.status).toBe(201);
    const { invitation, url } = inv.body.data;
    expect(invitation.role).toBe('member');
    expect(new Date(invitation.expiresAt).getTime() - Date.now()).toBeGreaterThan(7 * 86_400_000 - 60_000);
    const token = new URL(url).searchParams.get('token')!;
    expect(new URL(url).pathname).toBe('/join');
    expect((await req(ada, 'GET', `/api/v1/teams/${teamId}/invitations`)).body.data.invitations.map((i: any) => i.id)).toEqual([invitation.id]);

    const look = await app.request('POST', '/api/v1/invitations/lookup', { body: { token } });
    expect(look.body.data).toMatchObject({ team: { id: teamId, name: 'Invites' }, role: 'member', email: 'newcomer@example.test' });
    // Sign-up is off: without the invitation 403; with it, for another email 403; for its email 201.
    const signUp = (body: unknown) => app.request('POST', '/api/v1/auth/sign-up', { body });
    expect((await signUp({ email: 'newcomer@example.test', name: 'N', password: 'long enough password' })).status).toBe(403);
    expect((await signUp({ email: 'other@example.test', name: 'N', password: 'long enough password', invitationToken: token })).status).toBe(403);
    const created = await signUp({ email: 'newcomer@example.test', name: 'Newcomer', password: 'long enough password', invitationToken: token });
    expect(created.status).toBe(201);
    const members = (await req(ada, 'GET', `/api/v1/teams/${teamId}`)).body.data.members;
    expect(members.map((m: any) => [m.user.email, m.role])).toEqual([
      [ada.email, 'admin'],
      ['newcomer@example.test', 'member'],
    ]);
    // One use.
    expect((await app.request('POST', '/api/v1/invitations/lookup', { body: { token } })).status).toBe(404);
    expect((await req(eve, 'POST', '/api/v1/teams/join', { token })).status).toBe(404);

    // A signed-in user joins with an open link; a revoked one is refused.
    const open = await req(ada, 'POST', `/api/v1/teams/${teamId}/invitations`, { role: 'viewer' });
    const openToken = new URL(open.body.data.url).searchParams.get('token')!;
    const revoked = await req(ada, 'POST', `/api/v1/teams/${teamId}/invitations`, { role: 'admin' });
    expect((await req(ada, 'DELETE', `/api/v1/teams/${teamId}/invitations/${revoked.body.data.invitation.id}`)).status).toBe(200);
    expect((await req(eve, 'POST', '/api/v1/teams/join', { token: new URL(revoked.body.data.url).searchParams.get('token') })).status).toBe(404);
    const joined = await req(eve, 'POST', '/api/v1/teams/join', { token: openToken });
    expect(joined.body.data.team).toMatchObject({ id: teamId, role: 'viewer' });
    expect((await req(bob, 'POST', `/api/v1/teams/${teamId}/invitations`, { role: 'admin' })).status).toBe(404);
    expect((await req(eve, 'POST', `/api/v1/teams/${teamId}/invitations`, { role: 'admin' })).status).toBe(403);
  });
});

describe('moving projects', () => {
  test('personal → team → personal: sessions and uploaders stay; who reads follows', async () => {
    const teamId = await newTeam(ada, 'Movers');
    await addMember(ada, teamId, bob, 'viewer');
    const sid = crypto.randomUUID();
    expect((await req(ada, 'PUT', `/api/v1/projects/moving/sessions/${sid}`, { name: 's', markdown: 'moving words' })).status).toBe(201);
    expect((await req(bob, 'GET', '/api/v1/projects/moving')).status).toBe(403);
    // Into a team the caller is not in → 404; by a non-owner → 403.
    expect(await req(eve, 'POST', '/api/v1/projects/moving/move', { teamId })).toMatchObject({ status: 403 });
    const other = await newTeam(eve, 'Elsewhere');
    expect(await req(ada, 'POST', '/api/v1/projects/moving/move', { teamId: other })).toMatchObject({ status: 404, body: { error: 'Team not found' } });
    expect((await req(ada, 'POST', '/api/v1/projects/moving/move', {})).status).toBe(400);

    const moved = await req(ada, 'POST', '/api/v1/projects/moving/move', { teamId });
    expect(moved.status).toBe(200);
    expect(moved.body.data.project).toMatchObject({ id: 'moving', ownerId: teamId, owner: { type: 'team', name: 'Movers' }, sessionCount: 1 });
    const read = await req(bob, 'GET', `/api/v1/projects/moving/sessions/${sid}`);
    expect(read.status).toBe(200);
    expect(read.body.data.session).toMatchObject({ uploadedBy: { id: ada.id, name: 'ada' }, project: { id: 'moving', owner: { type: 'team', id: teamId } } });
    // A viewer reads only.
    expect((await req(bob, 'PATCH', `/api/v1/projects/moving/sessions/${sid}`, { name: 'v' })).status).toBe(403);
    expect((await req(bob, 'PUT', `/api/v1/projects/moving/sessions/${crypto.randomUUID()}`, { name: 's', markdown: 'm' })).status).toBe(403);

    const back = await req(ada, 'POST', '/api/v1/projects/moving/move', { teamId: null });
    expect(back.body.data.project.owner).toMatchObject({ type: 'user', id: ada.id });
    expect((await req(bob, 'GET', '/api/v1/projects/moving')).status).toBe(403);
    expect((await req(ada, 'GET', `/api/v1/projects/moving/sessions/${sid}`)).body.data.session.uploadedBy).toEqual({ id: ada.id, name: 'ada' });
  });
});
