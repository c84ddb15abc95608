/**
 * Live lists: `Subscription.sessionsChanged` over Server-Sent Events (graphql-sse, distinct
 * connections) at /api/v1/graphql/stream, with the official `graphql-sse` client. Two app
 * instances on one database and one Redis: a change made through one reaches a subscriber of the
 * other. The access rule holds per event (a member removed from a team stops hearing of it), the
 * eleventh open stream of a user is 429, and only subscriptions run on the stream.
 */
import crypto from 'node:crypto';
import http from 'node:http';
import { createClient, type Client } from 'graphql-sse';
import { startTestApp, type TestApp, type TestResponse, type TestUser } from '../support/app';
import { browser } from '../support/cookie-client';
import { createUser } from '../../src/services/users';
import { operatorCtx } from '../../src/services/context';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const CHANGES = `subscription Changes($projectId: ID) {
  sessionsChanged(projectId: $projectId) { kind projectId sessionId at session { id displayTitle } }
}`;

interface Change {
  kind: string;
  projectId: string;
  sessionId: string;
  at: string;
  session: { id: string; displayTitle: string } | null;
}

let a: TestApp;
let b: TestApp;
let owner: TestUser;
let other: TestUser;
const clients: Client[] = [];
const closers: Array<() => void> = [];

beforeAll(async () => {
  a = await startTestApp({ env: { REDIS_URL } });
  b = await startTestApp({ env: { REDIS_URL }, db: a.db });
  owner = await a.createUser('owner');
  other = await a.createUser('other');
});
afterAll(async () => {
  for (const close of closers) close();
  for (const c of clients) c.dispose();
  await b?.close();
  await a?.close();
});

/** A subscription through `app`'s stream endpoint: its changes as they come, resolved once connected. */
async function subscribe(
  app: TestApp,
  user: TestUser,
  variables: Record<string, unknown> = {},
  headers: Record<string, string> = { Authorization: `Bearer ${user.token}` },
) {
  const client = createClient({ url: `${app.url}/api/v1/graphql/stream`, headers, retryAttempts: 0 });
  clients.push(client);
  const changes: Change[] = [];
  const errors: unknown[] = [];
  const waiters: Array<() => void> = [];
  let connected!: () => void;
  const ready = new Promise<void>((r) => (connected = r));
  let end!: () => void;
  const ended = new Promise<void>((r) => (end = r));
  const stop = client.subscribe<{ sessionsChanged: Change }>(
    { query: CHANGES, variables },
    {
      next: (result) => {
        if (result.errors) errors.push(...result.errors);
        if (result.data) changes.push(result.data.sessionsChanged);
        waiters.splice(0).forEach((w) => w());
      },
      error: (err) => {
        errors.push(err);
        connected();
        end();
        waiters.splice(0).forEach((w) => w());
      },
      complete: () => end(),
    },
    { connected: () => connected() },
  );
  closers.push(stop);
  await ready;
  /** Waits until `count` changes have come (or an error). */
  const until = async (count: number) => {
    while (changes.length < count && errors.length === 0) await new Promise<void>((r) => waiters.push(r));
    return changes;
  };
  return { changes, errors, until, stop, ended };
}

/** A raw request to the stream endpoint (status and headers, then closed). */
function rawStream(app: TestApp, token: string, body: unknown, headers: Record<string, string> = {}): Promise<TestResponse & { close(): void }> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${app.url}/api/v1/graphql/stream`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', Accept: 'text/event-stream', ...headers },
    });
    req.on('response', (res) => {
      if (res.statusCode === 200) {
        return resolve({ status: 200, headers: res.headers, body: null, text: '', close: () => req.destroy() } as never);
      }
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, text, body: JSON.parse(text) as unknown, close: () => undefined } as never));
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

const md = (word: string) => `_**User**_\n\n${word}\n\n_**Agent**_\n\ndone\n`;

describe('changes reach subscribers', () => {
  test('an upload, an edit and a deletion through one instance reach a subscriber of the other, in order', async () => {
    const s = await subscribe(b, owner);
    const id = crypto.randomUUID();
    await a.upload(owner, 'live-a', id, { name: 'First upload', markdown: md('first') });
    await a.upload(owner, 'live-a', id, { name: 'Second upload', markdown: md('second') });
    expect((await a.request('DELETE', `/api/v1/projects/live-a/sessions/${id}`, { token: owner.token })).status).toBe(200);
    const changes = await s.until(3);
    expect(s.errors).toEqual([]);
    expect(changes.map((c) => [c.kind, c.projectId, c.sessionId])).toEqual([
      ['CREATED', 'live-a', id],
      ['UPDATED', 'live-a', id],
      ['DELETED', 'live-a', id],
    ]);
    expect(changes[0].session).toEqual({ id, displayTitle: 'First upload' });
    expect(changes[1].session?.displayTitle).toBe('Second upload');
    expect(changes[2].session).toBeNull();
    expect(new Date(changes[0].at).getTime()).toBeGreaterThan(Date.now() - 60_000);
    s.stop();
  });

  test("with projectId: that project's changes only; another user's project is refused", async () => {
    await a.upload(owner, 'live-only', crypto.randomUUID(), { name: 'before', markdown: md('b') });
    const s = await subscribe(a, owner, { projectId: 'live-only' });
    await a.upload(owner, 'live-elsewhere', crypto.randomUUID(), { name: 'elsewhere', markdown: md('x') });
    const id = crypto.randomUUID();
    await b.upload(owner, 'live-only', id, { name: 'here', markdown: md('y') });
    expect((await s.until(1)).map((c) => c.sessionId)).toEqual([id]);
    s.stop();

    const refused = await subscribe(a, other, { projectId: 'live-only' });
    await refused.until(1);
    expect(refused.changes).toEqual([]);
    expect(JSON.stringify(refused.errors)).toContain('FORBIDDEN');

    const unknown = await subscribe(a, owner, { projectId: 'live-no-such-project' });
    await unknown.until(1);
    expect(JSON.stringify(unknown.errors)).toContain('NOT_FOUND');
  });

  test("nobody hears of another user's sessions", async () => {
    const outsider = await subscribe(a, other);
    const mine = crypto.randomUUID();
    await a.upload(owner, 'live-private', crypto.randomUUID(), { name: 'private', markdown: md('p') });
    await a.upload(other, 'live-theirs', mine, { name: 'theirs', markdown: md('t') });
    // Their own upload comes; the owner's, made first, never did.
    expect((await outsider.until(1)).map((c) => c.sessionId)).toEqual([mine]);
    outsider.stop();
  });
});

describe('teams', () => {
  test('a member hears of the team project; removed, they stop hearing of it', async () => {
    const admin = await a.createUser('live-admin');
    const member = await a.createUser('live-member');
    const team = await a.gql(admin, 'mutation { createTeam(name: "Live") { id } }');
    const teamId = (team.body as { data: { createTeam: { id: string } } }).data.createTeam.id;
    const added = await a.request('POST', `/api/v1/teams/${teamId}/members`, { token: admin.token, body: { email: member.email, role: 'member' } });
    expect([200, 201]).toContain(added.status);
    const projectId = 'live-team';
    expect((await a.request('POST', '/api/v1/projects', { token: admin.token, body: { id: projectId, name: 'Live team', teamId } })).status).toBe(201);

    const s = await subscribe(b, member);
    const first = crypto.randomUUID();
    await a.upload(admin, projectId, first, { name: 'team 1', markdown: md('1') });
    expect((await s.until(1)).map((c) => c.sessionId)).toEqual([first]);

    expect((await a.request('DELETE', `/api/v1/teams/${teamId}/members/${member.id}`, { token: admin.token })).status).toBe(200);
    // Memberships are read again at most every half second.
    await new Promise((r) => setTimeout(r, 1000));
    await a.upload(admin, projectId, crypto.randomUUID(), { name: 'team 2', markdown: md('2') });
    const own = crypto.randomUUID();
    await a.upload(member, 'live-member-own', own, { name: 'own', markdown: md('3') });
    // The member's own upload comes after the team's second one; the team's never does.
    expect((await s.until(2)).map((c) => c.sessionId)).toEqual([first, own]);
    s.stop();
  });
});

describe('the credential', () => {
  test('a key revoked while its stream is open ends the stream before the next change', async () => {
    const user = await a.createUser('revoked');
    const second = await a.newKey(user, 'second');
    const s = await subscribe(b, { ...user, token: second.token });
    const first = crypto.randomUUID();
    await a.upload(user, 'live-revoked', first, { name: 'before', markdown: md('1') });
    expect((await s.until(1)).map((c) => c.sessionId)).toEqual([first]);
    expect((await a.request('DELETE', `/api/v1/keys/${second.keyId}`, { token: user.token })).status).toBe(200);
    // Memberships and the credential are read again at most every half second.
    await new Promise((r) => setTimeout(r, 1000));
    await a.upload(user, 'live-revoked', crypto.randomUUID(), { name: 'after', markdown: md('2') });
    await s.ended;
    expect(s.changes.map((c) => c.sessionId)).toEqual([first]);
  });

  test('a browser session that expires for idleness while its stream is open ends the stream', async () => {
    const email = `live-idle-${process.pid}-${Date.now()}@example.test`;
    const created = await createUser(operatorCtx(a.deps.db), email, 'Idle', { password: 'correct horse battery staple' });
    const user = { id: created.id, email, ...(await a.newKey(created)) };
    const b1 = browser(a);
    expect((await b1.signIn(email, 'correct horse battery staple')).status).toBe(200);
    const cookie = { Cookie: `sa_session=${b1.cookie}`, 'X-CSRF-Token': b1.csrf!, Origin: a.url };
    const s = await subscribe(a, user, {}, cookie);
    const first = crypto.randomUUID();
    await a.upload(user, 'live-idle', first, { name: 'before', markdown: md('1') });
    expect((await s.until(1)).map((c) => c.sessionId)).toEqual([first]);
    // Last used 31 days ago: signed out by idleness (30 days), though the cookie is still sent.
    await a.deps.db.pool.query('UPDATE user_sessions SET lastUsedAt = NOW(3) - INTERVAL 31 DAY WHERE userId = ?', [user.id]);
    await new Promise((r) => setTimeout(r, 1000));
    await a.upload(user, 'live-idle', crypto.randomUUID(), { name: 'after', markdown: md('2') });
    await s.ended;
    expect(s.changes.map((c) => c.sessionId)).toEqual([first]);
  });
});

describe('the stream endpoint', () => {
  test('the eleventh open stream of a user is 429 in the GraphQL envelope; closing one makes room', async () => {
    const user = await a.createUser('streams');
    const open: Array<{ close(): void }> = [];
    for (let i = 0; i < 10; i++) {
      const r = await rawStream(i % 2 ? a : b, user.token, { query: CHANGES });
      expect(r.status).toBe(200);
      expect(String(r.headers['content-type'])).toMatch(/^text\/event-stream/);
      open.push(r);
    }
    const eleventh = await rawStream(a, user.token, { query: CHANGES });
    expect(eleventh.status).toBe(429);
    expect(eleventh.body).toEqual({ errors: [{ message: 'At most 10 open streams per user: close one first', extensions: { code: 'RATE_LIMITED' } }] });
    open.pop()!.close();
    let again: TestResponse & { close(): void };
    // The closed stream's slot is given back once the server sees the connection end.
    do again = await rawStream(a, user.token, { query: CHANGES });
    while (again.status === 429);
    expect(again.status).toBe(200);
    again.close();
    open.forEach((r) => r.close());
  });

  test('no credential is 401; a query is refused; a form post is refused; without Accept it says what to send', async () => {
    const anonymous = await new Promise<number>((resolve, reject) => {
      const req = http.request(`${a.url}/api/v1/graphql/stream`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Accept: 'text/event-stream' },
      });
      req.on('response', (res) => (res.resume(), resolve(res.statusCode!)));
      req.on('error', reject);
      req.end(JSON.stringify({ query: CHANGES }));
    });
    expect(anonymous).toBe(401);

    const query = await rawStream(a, owner.token, { query: '{ projects { id } }' });
    expect(query.status).toBe(400);
    expect(JSON.stringify(query.body)).toContain('Only subscriptions run on /api/v1/graphql/stream');

    const form = await rawStream(a, owner.token, { query: CHANGES }, { 'Content-Type': 'text/plain' });
    expect(form.status).toBe(400);

    const noAccept = await rawStream(a, owner.token, { query: CHANGES }, { Accept: 'application/json' });
    expect(noAccept.status).toBe(400);
    expect(JSON.stringify(noAccept.body)).toContain('Accept: text/event-stream');
  });

  test('a subscription sent to /api/v1/graphql says where subscriptions run', async () => {
    const r = await a.gql(owner, CHANGES);
    expect(r.status).toBe(400);
    expect(JSON.stringify(r.body)).toContain('/api/v1/graphql/stream');
  });
});
