/**
 * Invitations are spent before they are used: however many requests race with one link, it
 * creates at most one account or one membership (the spend comes first, in the transaction that
 * creates). And an invitation dies with its creator's membership or admin role: a removed admin
 * cannot come back through a link they made, and a demoted admin's links stop working, for good.
 */
import { startTestApp, type TestApp, type TestUser } from '../support/app';

let app: TestApp;
let seq = 0;
const WITHDRAWN = 'This invitation was withdrawn: whoever made it is no longer an admin of the team';

beforeAll(async () => {
  app = await startTestApp({ rateLimit: false });
}, 60_000);
afterAll(() => app?.close());

const req = (u: { token: string }, method: string, path: string, body?: unknown) => app.request(method, path, { token: u.token, body });
const email = (prefix: string) => `${prefix}-${process.pid}-${++seq}@example.test`;

async function teamOf(admin: TestUser): Promise<string> {
  const r = await req(admin, 'POST', '/api/v1/teams', { name: `Team ${++seq}` });
  expect(r.status).toBe(201);
  return r.body.data.team.id;
}

async function invite(admin: TestUser, teamId: string, role: string): Promise<{ id: string; token: string }> {
  const r = await req(admin, 'POST', `/api/v1/teams/${teamId}/invitations`, { role });
  expect(r.status).toBe(201);
  return { id: r.body.data.invitation.id, token: new URL(r.body.data.url).searchParams.get('token')! };
}

async function members(admin: TestUser, teamId: string): Promise<Array<[string, string]>> {
  const r = await req(admin, 'GET', `/api/v1/teams/${teamId}`);
  return r.body.data.members.map((m: { user: { email: string }; role: string }) => [m.user.email, m.role]);
}

const signUp = (address: string, invitationToken: string) =>
  app.request('POST', '/api/v1/auth/sign-up', { body: { email: address, name: 'Racer', password: 'long enough password', invitationToken } });

async function usersWith(emails: string[]): Promise<number> {
  const [{ n }] = await app.deps.db.pool.query(`SELECT COUNT(*) n FROM users WHERE email IN (${emails.map(() => '?').join(',')})`, emails);
  return Number(n);
}

test('8 concurrent sign-ups with one invitation make exactly one account', async () => {
  const ada = await app.createUser('race-admin');
  const teamId = await teamOf(ada);
  const { token } = await invite(ada, teamId, 'member');
  const emails = Array.from({ length: 8 }, () => email('racer'));

  const answers = await Promise.all(emails.map((e) => signUp(e, token)));
  const statuses = answers.map((r) => r.status).sort();
  expect(statuses).toEqual([201, 404, 404, 404, 404, 404, 404, 404]);
  for (const r of answers.filter((a) => a.status === 404)) expect(r.body).toEqual({ success: false, error: 'Invalid or expired invitation' });
  expect(await usersWith(emails)).toBe(1);
  const winner = emails[answers.findIndex((r) => r.status === 201)];
  expect(await members(ada, teamId)).toEqual([
    [ada.email, 'admin'],
    [winner, 'member'],
  ]);
});

test('8 existing users joining with one invitation at once make exactly one membership', async () => {
  const ada = await app.createUser('join-race-admin');
  const teamId = await teamOf(ada);
  const { token } = await invite(ada, teamId, 'viewer');
  const racers = await Promise.all(Array.from({ length: 8 }, (_, i) => app.createUser(`join-racer-${i}`)));

  const answers = await Promise.all(racers.map((u) => req(u, 'POST', '/api/v1/teams/join', { token })));
  expect(answers.map((r) => r.status).sort()).toEqual([200, 404, 404, 404, 404, 404, 404, 404]);
  expect(await members(ada, teamId)).toHaveLength(2);
});

test('a removed admin cannot rejoin through an invitation they made before, even once they are an admin again', async () => {
  const ada = await app.createUser('owner');
  const bob = await app.createUser('removed-admin');
  const teamId = await teamOf(ada);
  expect((await req(ada, 'POST', `/api/v1/teams/${teamId}/members`, { email: bob.email, role: 'admin' })).status).toBe(201);
  const mine = await invite(bob, teamId, 'admin');
  expect((await req(ada, 'DELETE', `/api/v1/teams/${teamId}/members/${bob.id}`)).status).toBe(200);

  const back = await req(bob, 'POST', '/api/v1/teams/join', { token: mine.token });
  expect(back.status).toBe(404);
  expect(back.body).toEqual({ success: false, error: WITHDRAWN });
  expect(await members(ada, teamId)).toEqual([[ada.email, 'admin']]);
  expect((await app.request('POST', '/api/v1/invitations/lookup', { body: { token: mine.token } })).body).toEqual({ success: false, error: WITHDRAWN });
  expect((await req(ada, 'GET', `/api/v1/teams/${teamId}/invitations`)).body.data.invitations).toEqual([]);

  // Made an admin again by someone else: the old link stays dead.
  expect((await req(ada, 'POST', `/api/v1/teams/${teamId}/members`, { email: bob.email, role: 'admin' })).status).toBe(201);
  const eve = await app.createUser('later');
  expect((await req(eve, 'POST', '/api/v1/teams/join', { token: mine.token })).body).toEqual({ success: false, error: WITHDRAWN });
});

test("a demoted admin's invitations stop working: no account, no membership", async () => {
  const ada = await app.createUser('demoter');
  const bob = await app.createUser('demoted-admin');
  const teamId = await teamOf(ada);
  expect((await req(ada, 'POST', `/api/v1/teams/${teamId}/members`, { email: bob.email, role: 'admin' })).status).toBe(201);
  const byBob = await invite(bob, teamId, 'member');
  const byAda = await invite(ada, teamId, 'member');
  expect((await req(ada, 'PATCH', `/api/v1/teams/${teamId}/members/${bob.id}`, { role: 'member' })).status).toBe(200);

  const newcomer = email('newcomer');
  const created = await signUp(newcomer, byBob.token);
  expect(created.status).toBe(404);
  expect(created.body).toEqual({ success: false, error: WITHDRAWN });
  expect(await usersWith([newcomer])).toBe(0);
  const carol = await app.createUser('carol');
  expect((await req(carol, 'POST', '/api/v1/teams/join', { token: byBob.token })).body).toEqual({ success: false, error: WITHDRAWN });
  // Only the demoted admin's: the remaining admin's invitation still works.
  const open = (await req(ada, 'GET', `/api/v1/teams/${teamId}/invitations`)).body.data.invitations.map((i: { id: string }) => i.id);
  expect(open).toEqual([byAda.id]);
  expect((await req(carol, 'POST', '/api/v1/teams/join', { token: byAda.token })).status).toBe(200);
  expect(await members(ada, teamId)).toHaveLength(3);
});
