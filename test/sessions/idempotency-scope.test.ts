/**
 * Idempotency-Key scope and what is never kept: a key is scoped to (user, method,
 * path), so both SDKs' basic-usage examples — which send the constant key `test-session-001` for
 * every new session — each create their session; answers that carry a freshly issued credential or
 * one-time link, whatever the case of the path, and answers over 1 MiB are never stored.
 *
 * The SDK examples are replayed request by request as their source sends them
 * (specstory-cloud-sdk-typescript examples/basic-usage.ts, specstory-cloud-sdk-python
 * examples/basic_usage.py; headers and JSON encoding in test/support/specstory-clients.ts).
 */
import crypto from 'node:crypto';
import type { Search } from '../../src/search';
import { createUser } from '../../src/services/users';
import { operatorCtx } from '../../src/services/context';
import { startTestApp, type TestApp, type TestUser } from '../support/app';
import { eventually } from '../support/eventually';
import { cliApi, cliPut, CLI_VERSION, pySdk, tsSdk } from '../support/specstory-clients';

let app: TestApp;
let a: TestUser;
let admin: TestUser;

beforeAll(async () => {
  app = await startTestApp({ env: { RATE_LIMIT_REST_PER_HOUR: '100000' } });
  a = await app.createUser('a');
  const u = await createUser(operatorCtx(app.deps.db), `admin-${process.pid}-${Date.now()}@example.test`, 'Admin', {
    password: 'correct horse battery',
    role: 'admin',
  });
  admin = { id: u.id, email: u.email, ...(await app.newKey(u)) };
});
afterAll(() => app?.close());

const key = () => `key-${crypto.randomUUID()}`;
const rowsOf = async (k: string) =>
  app.deps.db.prisma.$queryRawUnsafe<{ responseJson: string | null }[]>('SELECT responseJson FROM idempotency_keys WHERE idemKey = ?', k);

describe("both SDKs' basic-usage examples, one after the other, with their constant key", () => {
  test('TypeScript then Python: each creates, reads and deletes its own session', async () => {
    expect((await tsSdk(app, a.token, 'POST', '/api/v1/projects', { id: 'sdk-examples', name: 'SDK examples' })).status).toBe(201);
    const created: string[] = [];
    const metadata = { clientName: 'example-app', tags: ['test', 'demo'] };

    // examples/basic-usage.ts
    {
      const projects = (await tsSdk(app, a.token, 'GET', '/api/v1/projects')).body.data.projects;
      const project = projects[0];
      const sid = crypto.randomUUID();
      const body = {
        name: 'Test Session',
        markdown: '# Test Session\n\nThis is a test session content.',
        rawData: JSON.stringify({ test: true }),
        metadata,
        projectName: 'Test Session',
      };
      const w = await tsSdk(app, a.token, 'PUT', `/api/v1/projects/${project.id}/sessions/${sid}`, body, 'test-session-001');
      expect(w.status).toBe(201);
      expect(w.body.data.sessionId).toBe(sid);
      created.push(sid);
      expect((await tsSdk(app, a.token, 'GET', `/api/v1/projects/${project.id}/sessions`)).body.data.sessions.map((s: any) => s.id)).toContain(sid);
      const read = await app.request('GET', `/api/v1/projects/${project.id}/sessions/${sid}`, {
        token: a.token,
        headers: { Accept: 'application/json', 'User-Agent': 'specstory-sdk-typescript/0.1.0' },
      });
      expect(read.body.data.session.name).toBe('Test Session');
      expect((await tsSdk(app, a.token, 'HEAD', `/api/v1/projects/${project.id}/sessions/${sid}`)).status).toBe(200);
      expect((await tsSdk(app, a.token, 'DELETE', `/api/v1/projects/${project.id}/sessions/${sid}`)).status).toBe(200);
    }

    // examples/basic_usage.py, unchanged: the same key, a new session id (uuid4)
    {
      const projects = (await pySdk(app, a.token, 'GET', '/api/v1/projects')).body.data.projects;
      const project = projects[0];
      const sid = crypto.randomUUID();
      // WriteSessionRequest(...).model_dump(exclude_none=True): the model's field order.
      const body = {
        projectName: 'Test Session',
        markdown: '# Test Session\n\nThis is a test session content.',
        rawData: '{"test": true}',
        name: 'Test Session',
        metadata,
      };
      const w = await pySdk(app, a.token, 'PUT', `/api/v1/projects/${project.id}/sessions/${sid}`, body, 'test-session-001');
      expect(w.status).toBe(201); // 422 while keys were scoped per user only
      expect(w.headers['idempotent-replayed']).toBeUndefined();
      expect(w.body.data.sessionId).toBe(sid);
      created.push(sid);
      expect((await pySdk(app, a.token, 'GET', `/api/v1/projects/${project.id}/sessions`)).body.data.sessions.map((s: any) => s.id)).toContain(sid);
      const read = await pySdk(app, a.token, 'GET', `/api/v1/projects/${project.id}/sessions/${sid}`);
      expect(read.body.data.session).toMatchObject({ name: 'Test Session', markdownSize: Buffer.byteLength(body.markdown) });
      expect((await pySdk(app, a.token, 'HEAD', `/api/v1/projects/${project.id}/sessions/${sid}`)).status).toBe(200);
      expect((await pySdk(app, a.token, 'DELETE', `/api/v1/projects/${project.id}/sessions/${sid}`)).status).toBe(200);
    }
    expect(new Set(created).size).toBe(2);
  });
});

describe('answers that carry a credential or a one-time link are never stored or replayed', () => {
  const paths = (p: string) => [
    p,
    p.toUpperCase().replace('/API/V1', '/api/v1'),
    p.replace(/\/([a-z])/g, (_m, c: string) => `/${c.toUpperCase()}`).replace('/Api/V1', '/api/v1'),
  ];

  test.each(paths('/api/v1/keys'))('POST %s: a new API token each time', async (path) => {
    const k = key();
    const one = await tsSdk(app, a.token, 'POST', path, { name: 'laptop' }, k);
    const two = await tsSdk(app, a.token, 'POST', path, { name: 'laptop' }, k);
    expect([one.status, two.status]).toEqual([201, 201]);
    expect(two.headers['idempotent-replayed']).toBeUndefined();
    expect(two.body.data.token).not.toBe(one.body.data.token);
    expect(await rowsOf(k)).toEqual([]);
  });

  test.each(paths('/api/v1/device-codes'))('POST %s: a new device code each time', async (path) => {
    const k = key();
    const one = await tsSdk(app, a.token, 'POST', path, {}, k);
    const two = await tsSdk(app, a.token, 'POST', path, {}, k);
    expect([one.status, two.status]).toEqual([201, 201]);
    expect(two.headers['idempotent-replayed']).toBeUndefined();
    expect(two.body.data.code).not.toBe(one.body.data.code);
    expect(await rowsOf(k)).toEqual([]);
  });

  test("reset links (POST /users/{id}/reset-password, any case) and a new user's set-password link", async () => {
    const member = await app.createUser('m');
    for (const path of [`/api/v1/users/${member.id}/reset-password`, `/api/v1/USERS/${member.id}/Reset-Password`]) {
      const k = key();
      const one = await tsSdk(app, admin.token, 'POST', path, {}, k);
      const two = await tsSdk(app, admin.token, 'POST', path, {}, k);
      expect([one.status, two.status]).toEqual([200, 200]);
      expect(one.body.data.link).toMatch(/reset-password\?token=/);
      expect(two.body.data.link).not.toBe(one.body.data.link);
      expect(await rowsOf(k)).toEqual([]);
    }
    const k = key();
    const made = await tsSdk(app, admin.token, 'POST', '/api/v1/Users', { email: `new-${Date.now()}@example.test`, name: 'New' }, k);
    expect(made.status).toBe(201);
    expect(made.body.data.link).toMatch(/reset-password\?token=/);
    expect(await rowsOf(k)).toEqual([]);
  });

  test('an answer without a fresh secret on the same routers is still kept (the rule is the secret, not the router)', async () => {
    const k = key();
    const body = { email: `pw-${Date.now()}@example.test`, name: 'With password', password: 'correct horse battery' };
    const u = await tsSdk(app, admin.token, 'POST', '/api/v1/users', body, k);
    expect(u.status).toBe(201);
    const again = await tsSdk(app, admin.token, 'POST', '/api/v1/users', body, k);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toEqual(u.body);
    const rows = await rowsOf(k);
    expect(rows.length).toBe(1);
    expect(rows[0].responseJson).not.toMatch(/token|link/);
  });
});

describe('answers over 1 MiB are never stored', () => {
  test('POST /search/resume with a large answer is not kept; a small one is', async () => {
    // 40 resumable sessions, each with 32 KiB of extra metadata (part of every summary).
    const extra = Object.fromEntries(Array.from({ length: 30 }, (_v, i) => [`note${i}`, `${'lorem ipsum dolor '.repeat(55)}${i}`]));
    for (let i = 0; i < 40; i++) {
      const id = crypto.randomUUID();
      const r = await cliPut(app, a.token, 'idem-big', id, {
        projectId: 'idem-big',
        projectName: 'Big answers',
        name: `big ${i}`,
        markdown: `# Big ${i}\n\n_**User**_\n\nthe quokkafinch resume ${i}\n`,
        rawData: '{}',
        sessionData: JSON.stringify({ id }),
        metadata: { clientName: 'specstory-cli', clientVersion: CLI_VERSION, agentName: 'Claude Code', deviceId: 'dev-a' },
      });
      expect(r.status).toBe(201);
      // The CLI sends no extra metadata: add it through an SDK-style upload of the same content.
      const put = await tsSdk(app, a.token, 'PUT', `/api/v1/projects/idem-big/sessions/${id}`, {
        name: `big ${i}`,
        markdown: `# Big ${i}\n\n_**User**_\n\nthe quokkafinch resume ${i}\n`,
        metadata: { clientName: 'specstory-cli', ...extra },
      });
      expect(put.status).toBe(200);
    }
    await eventually('the search index to catch up', async () => (await (app.deps.search as unknown as Search).backlog()) === 0, 60_000);

    const k = key();
    const one = await cliApi(app, a.token, 'POST', '/api/v1/search/resume', { query: 'quokkafinch' });
    expect(one.status).toBe(200);
    expect(one.body.data.results.length).toBe(40);
    const keyed = await tsSdk(app, a.token, 'POST', '/api/v1/search/resume', { query: 'quokkafinch' }, k);
    expect(keyed.status).toBe(200);
    expect(keyed.raw.length).toBeGreaterThan(1024 * 1024);
    expect(await rowsOf(k)).toEqual([]);
    const again = await tsSdk(app, a.token, 'POST', '/api/v1/search/resume', { query: 'quokkafinch' }, k);
    expect(again.headers['idempotent-replayed']).toBeUndefined();

    const small = key();
    const s1 = await tsSdk(app, a.token, 'POST', '/api/v1/search/resume', { query: 'quokkafinch', projectId: 'none-such' }, small);
    expect(s1.status).toBe(200);
    expect((await rowsOf(small)).length).toBe(1);
    const s2 = await tsSdk(app, a.token, 'POST', '/api/v1/search/resume', { query: 'quokkafinch', projectId: 'none-such' }, small);
    expect(s2.headers['idempotent-replayed']).toBe('true');
  }, 180_000);
});
