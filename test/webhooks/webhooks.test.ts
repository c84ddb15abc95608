import { Webhook as StandardWebhook } from 'standardwebhooks';
import { SID, startTestApp, type TestApp, type TestUser } from '../support/app';
import { startReceiver, type Received, type Receiver } from './receiver';

/*
 * Webhooks over REST: making, listing, showing and deleting them (the secret shown once), the
 * checks of their input and of who may make them, every event type delivered and signed as the
 * Standard Webhooks specification says (verified with its reference package), bodies without
 * transcript text, and only to webhooks whose owner may read what an event is about.
 */

let app: TestApp;
let rx: Receiver;
let a: TestUser;
let b: TestUser;
const TRANSCRIPT_MARK = 'TRANSCRIPT-TEXT-MARKER-w3k';
const ALL = ['session.created', 'session.updated', 'session.deleted', 'share.created', 'share.revoked', 'project.moved', 'member.added', 'member.removed'];

const req = (u: TestUser, method: string, path: string, body?: unknown) => app.request(method, `/api/v1${path}`, { token: u.token, body });
const upload = (u: TestUser, p: string, s: string, name = 'Fix login') =>
  req(u, 'PUT', `/projects/${p}/sessions/${s}`, {
    name,
    markdown: `# ${name}\n\n_**User**_\n\n${TRANSCRIPT_MARK}\n\n_**Agent**_\n\nDone.\n`,
    rawData: TRANSCRIPT_MARK,
  });

async function hook(u: TestUser, body: Record<string, unknown>, to: Receiver = rx): Promise<{ id: string; secret: string; path: string }> {
  const path = `/h/${Math.random().toString(36).slice(2)}`;
  const r = await req(u, 'POST', '/webhooks', { url: `${to.url}${path}`, events: ALL, ...body });
  expect(r.status).toBe(201);
  return { id: r.body.data.webhook.id, secret: r.body.data.secret, path: `/hook${path}` };
}

/** The verified payload of every request to `h`, checked against its secret with the reference package. */
function verified(h: { secret: string; path: string }, got: Received[]): Array<{ type: string; timestamp: string; data: Record<string, unknown> }> {
  const wh = new StandardWebhook(h.secret);
  return got
    .filter((g) => g.path === h.path)
    .map((g) => {
      expect(g.body).not.toContain(TRANSCRIPT_MARK);
      return wh.verify(g.body, g.headers as Record<string, string>) as { type: string; timestamp: string; data: Record<string, unknown> };
    });
}

async function teamOf(admin: TestUser): Promise<string> {
  const r = await req(admin, 'POST', '/teams', { name: `Team ${Math.random()}` });
  expect(r.status).toBe(201);
  return r.body.data.team.id;
}

beforeAll(async () => {
  rx = await startReceiver();
  app = await startTestApp({ env: { WEBHOOK_ALLOW_PRIVATE: 'true' } });
  a = await app.createUser('hooks-a');
  b = await app.createUser('hooks-b');
});
afterAll(async () => {
  await app?.close();
  await rx?.close();
});

describe('managing webhooks', () => {
  test('made with a whsec_ secret shown once; listed, shown and deleted by their owner alone', async () => {
    const r = await req(a, 'POST', '/webhooks', { url: `${rx.url}/crud`, events: ['session.created'] });
    expect(r.status).toBe(201);
    const { webhook, secret } = r.body.data;
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    expect(Buffer.from(secret.slice(6), 'base64').length).toBeGreaterThanOrEqual(24);
    expect(webhook).toMatchObject({ url: `${rx.url}/crud`, events: ['session.created'], projectId: null, teamId: null, disabled: false });

    const list = await req(a, 'GET', '/webhooks');
    expect(list.status).toBe(200);
    expect(list.body.data.webhooks.map((w: { id: string }) => w.id)).toContain(webhook.id);
    expect(list.text).not.toContain(secret.slice(6));
    expect((await req(a, 'GET', `/webhooks/${webhook.id}`)).body.data.webhook.id).toBe(webhook.id);
    expect((await req(a, 'GET', `/webhooks/${webhook.id}`)).text).not.toContain(secret.slice(6));

    expect((await req(b, 'GET', `/webhooks/${webhook.id}`)).status).toBe(404);
    expect((await req(b, 'GET', `/webhooks/${webhook.id}/deliveries`)).status).toBe(404);
    expect((await req(b, 'DELETE', `/webhooks/${webhook.id}`)).status).toBe(404);
    expect((await req(b, 'GET', '/webhooks')).body.data.webhooks).toEqual([]);

    expect((await req(a, 'DELETE', `/webhooks/${webhook.id}`)).status).toBe(200);
    expect((await req(a, 'GET', `/webhooks/${webhook.id}`)).status).toBe(404);
  });

  test.each([
    [{ events: ['session.created'] }, 'Missing required field: url'],
    [{ url: 'ftp://example.com/x', events: ['session.created'] }, 'url must be an absolute http or https URL'],
    [{ url: 'https://user:pw@example.com/x', events: ['session.created'] }, 'url must not carry a user name or password'],
    [{ url: 'https://example.com/x', events: [] }, 'events must be a non-empty list of: session.created'],
    [{ url: 'https://example.com/x', events: ['session.exploded'] }, 'events must be a non-empty list of'],
    [{ url: 'https://example.com/x', events: ['session.created'], projectId: 'p', teamId: 't' }, 'Give projectId or teamId, not both'],
  ])('bad input %j → 400 saying why', async (body, message) => {
    const r = await req(a, 'POST', '/webhooks', body);
    expect(r.status).toBe(400);
    expect(r.body.success).toBe(false);
    expect(r.body.error).toContain(message);
  });

  test('a project webhook needs read access to the project; a team webhook needs the admin role', async () => {
    expect((await upload(a, 'hooks-private', SID(90))).status).toBe(201);
    expect((await req(b, 'POST', '/webhooks', { url: rx.url, events: ALL, projectId: 'hooks-private' })).status).toBe(403);
    expect((await req(b, 'POST', '/webhooks', { url: rx.url, events: ALL, projectId: 'hooks-nowhere' })).status).toBe(404);
    const team = await teamOf(a);
    expect((await req(b, 'POST', '/webhooks', { url: rx.url, events: ALL, teamId: team })).status).toBe(404);
    expect((await req(a, 'POST', `/teams/${team}/members`, { email: b.email, role: 'member' })).status).toBe(201);
    const r = await req(b, 'POST', '/webhooks', { url: rx.url, events: ALL, teamId: team });
    expect(r.status).toBe(403);
    expect(r.body.error).toBe("Only the team's admins can add webhooks for the team");
    expect((await req(a, 'POST', '/webhooks', { url: rx.url, events: ALL, teamId: team })).status).toBe(201);
  });
});

describe('events', () => {
  test('every event type is delivered, signed, without transcript text, and only to those who may read it', async () => {
    const mine = await hook(a, {});
    const stranger = await hook(b, {});
    const team = await teamOf(a);
    const teamHook = await hook(a, { teamId: team });
    const p = 'hooks-events';

    expect((await upload(a, p, SID(1))).status).toBe(201);
    expect((await upload(a, p, SID(1), 'Fix login, again')).status).toBe(200);
    expect((await req(a, 'PATCH', `/projects/${p}/sessions/${SID(1)}`, { userTitle: 'Login, fixed' })).status).toBe(200);
    const share = await req(a, 'POST', `/projects/${p}/sessions/${SID(1)}/shares`, {});
    expect(share.status).toBe(201);
    expect((await req(a, 'DELETE', `/shares/${share.body.data.share.id}`)).status).toBe(200);
    expect((await req(a, 'POST', `/projects/${p}/move`, { teamId: team })).status).toBe(200);
    expect((await req(a, 'POST', `/teams/${team}/members`, { email: b.email, role: 'viewer' })).status).toBe(201);
    expect((await req(a, 'DELETE', `/teams/${team}/members/${b.id}`)).status).toBe(200);
    expect((await req(a, 'DELETE', `/projects/${p}/sessions/${SID(1)}`)).status).toBe(200);

    const personal = ['session.created', 'session.updated', 'session.updated', 'share.created', 'share.revoked', 'project.moved'];
    const teamEvents = ['project.moved', 'member.added', 'member.removed', 'session.deleted'];
    await rx.waitFor(personal.length, (g) => g.path === mine.path);
    await rx.waitFor(teamEvents.length, (g) => g.path === teamHook.path);
    // Deliveries run side by side: they may arrive in any order.
    const got = verified(mine, rx.received);
    expect(got.map((e) => e.type).sort()).toEqual([...personal].sort());
    const one = (type: string) => got.filter((e) => e.type === type);
    const [created] = one('session.created');
    expect(created.data).toMatchObject({ projectId: p, sessionId: SID(1), title: 'Fix login', consoleUrl: `/projects/${p}/sessions/${SID(1)}` });
    expect(created.data.markdownSize).toBeGreaterThan(0);
    expect(Date.parse(created.timestamp)).not.toBeNaN();
    expect(
      one('session.updated')
        .map((e) => e.data.title)
        .sort(),
    ).toEqual(['Fix login, again', 'Login, fixed']);
    expect(one('share.created')[0].data).toMatchObject({ shareId: share.body.data.share.id, sessionId: SID(1), createdBy: a.id });
    expect(one('share.revoked')[0].data).toMatchObject({ shareId: share.body.data.share.id, sessionId: SID(1) });
    expect(JSON.stringify(got)).not.toContain(share.body.data.share.url);
    expect(one('project.moved')[0].data).toMatchObject({ projectId: p, from: { type: 'user', id: a.id }, to: { type: 'team', id: team } });

    const teamGot = verified(teamHook, rx.received);
    expect(teamGot.map((e) => e.type).sort()).toEqual([...teamEvents].sort());
    expect(teamGot.find((e) => e.type === 'member.added')!.data).toMatchObject({ teamId: team, userId: b.id, role: 'viewer' });
    expect(teamGot.find((e) => e.type === 'session.deleted')!.data).toMatchObject({ projectId: p, sessionId: SID(1), title: 'Login, fixed' });
    // One id per event; the header's id is the delivery's.
    expect(new Set(rx.received.filter((g) => g.path === mine.path).map((g) => g.headers['webhook-id'])).size).toBe(personal.length);

    // The stranger's webhook got nothing of it.
    expect(rx.received.filter((g) => g.path === stranger.path)).toEqual([]);

    const deliveries = await req(a, 'GET', `/webhooks/${mine.id}/deliveries`);
    expect(deliveries.status).toBe(200);
    expect(deliveries.body.data.deliveries).toHaveLength(personal.length);
    expect(deliveries.body.data.deliveries[0]).toMatchObject({ type: 'project.moved', status: 'delivered', attempts: 1, responseStatus: 200 });
    expect(deliveries.body.data.deliveries[0].durationMs).toBeGreaterThanOrEqual(0);
  });

  test("a team's events reach only its admins' team webhooks; a project webhook stops when its owner loses access", async () => {
    const admin = await app.createUser('team-admin');
    const member = await app.createUser('team-member');
    const team = await teamOf(admin);
    expect((await req(admin, 'POST', `/teams/${team}/members`, { email: member.email, role: 'member' })).status).toBe(201);
    const p = 'hooks-team';
    expect((await req(admin, 'POST', '/projects', { id: p, name: 'Team hooks', teamId: team })).status).toBe(201);
    const adminTeamHook = await hook(admin, { teamId: team });
    const memberProjectHook = await hook(member, { projectId: p });
    const memberOwn = await hook(member, {});

    expect((await upload(member, p, SID(2))).status).toBe(201);
    await rx.waitFor(1, (g) => g.path === adminTeamHook.path);
    await rx.waitFor(1, (g) => g.path === memberProjectHook.path);

    // Removed from the team: the member's project webhook gets nothing more; the admins' does.
    expect((await req(admin, 'DELETE', `/teams/${team}/members/${member.id}`)).status).toBe(200);
    expect((await upload(admin, p, SID(3))).status).toBe(201);
    const adminGot = await rx.waitFor(3, (g) => g.path === adminTeamHook.path);
    expect(
      verified(adminTeamHook, adminGot)
        .map((e) => e.type)
        .sort(),
    ).toEqual(['member.removed', 'session.created', 'session.created']);
    expect(verified(memberProjectHook, rx.received).map((e) => e.type)).toEqual(['session.created']);
    expect(rx.received.filter((g) => g.path === memberOwn.path)).toEqual([]);
  });

  test('a resend sends the same event again, with the same id, as a new delivery', async () => {
    const h = await hook(a, { events: ['session.created'] });
    expect((await upload(a, 'hooks-resend', SID(4))).status).toBe(201);
    const [first] = await rx.waitFor(1, (g) => g.path === h.path);
    const list = await req(a, 'GET', `/webhooks/${h.id}/deliveries`);
    const r = await req(a, 'POST', `/webhooks/${h.id}/deliveries/${list.body.data.deliveries[0].id}/resend`);
    expect(r.status).toBe(201);
    expect(r.body.data.delivery).toMatchObject({ type: 'session.created', eventId: list.body.data.deliveries[0].eventId });
    const [, again] = await rx.waitFor(2, (g) => g.path === h.path);
    expect(again.headers['webhook-id']).toBe(first.headers['webhook-id']);
    expect(again.body).toBe(first.body);
    expect(verified(h, [again])).toHaveLength(1);
    expect((await req(a, 'POST', `/webhooks/${h.id}/deliveries/999999999/resend`)).status).toBe(404);
    expect((await req(b, 'POST', `/webhooks/${h.id}/deliveries/${list.body.data.deliveries[0].id}/resend`)).status).toBe(404);
  });
});
