/**
 * Read-only keys (scopes ["read"]): created over REST, GraphQL and the admin CLI; they read
 * everything their user can, and every write made with them, REST or GraphQL, is 403
 * `This key is read-only` with nothing written.
 */
import { SID, startTestApp, type TestApp, type TestUser } from '../support/app';
import { runCli } from '../support/cli';

const READ_ONLY = { success: false, error: 'This key is read-only' };

let app: TestApp;
let u: TestUser;
let ro: string;

beforeAll(async () => {
  app = await startTestApp({ rateLimit: false });
  u = await app.createUser('ro');
  const put = await app.request('PUT', `/api/v1/projects/ro-proj/sessions/${SID(1)}`, { token: u.token, body: { name: 's', markdown: '# hello\n' } });
  expect(put.status).toBe(201);
  const r = await app.request('POST', '/api/v1/keys', { token: u.token, body: { name: 'agent', scopes: ['read'] } });
  expect(r.status).toBe(201);
  expect(r.body.data.key.scopes).toEqual(['read']);
  ro = r.body.data.token;
});
afterAll(() => app?.close());

describe('creating keys with scopes', () => {
  test('REST: default is read and write; scopes are listed; bad scopes → 400', async () => {
    const full = await app.request('POST', '/api/v1/keys', { token: u.token, body: { name: 'full' } });
    expect(full.body.data.key.scopes).toEqual(['read', 'write']);
    const both = await app.request('POST', '/api/v1/keys', { token: u.token, body: { name: 'both', scopes: ['write', 'read'] } });
    expect(both.body.data.key.scopes).toEqual(['read', 'write']);
    const list = await app.request('GET', '/api/v1/keys', { token: u.token });
    const byName = Object.fromEntries(list.body.data.keys.map((k: any) => [k.name, k.scopes]));
    expect(byName).toMatchObject({ agent: ['read'], full: ['read', 'write'], test: ['read', 'write'] });
    for (const scopes of [['write'], [], ['read', 'admin'], 'read', ['read', 'read']]) {
      const bad = await app.request('POST', '/api/v1/keys', { token: u.token, body: { name: 'x', scopes } });
      expect(bad.status).toBe(400);
      expect(bad.body.error).toBe('Invalid value for scopes. Must be ["read"] or ["read", "write"]');
    }
  });

  test('GraphQL: createApiKey(scopes) and ApiKey.scopes', async () => {
    const r = await app.gql(u.token, 'mutation { createApiKey(name: "g", scopes: ["read"]) { key { name scopes } token } }');
    expect(r.body.data.createApiKey.key).toEqual({ name: 'g', scopes: ['read'] });
    const list = await app.gql(r.body.data.createApiKey.token, '{ apiKeys { name scopes } }');
    expect(list.body.data.apiKeys).toEqual(
      expect.arrayContaining([
        { name: 'g', scopes: ['read'] },
        { name: 'test', scopes: ['read', 'write'] },
      ]),
    );
  });

  test('admin CLI: keys create --read-only (and --scopes read) prints a read-only key', async () => {
    const run = (...args: string[]) => runCli(args, { databaseUrl: app.db.url });
    const a = await run('keys', 'create', '--email', u.email, '--name', 'cli-agent', '--read-only');
    expect(a.code).toBe(0);
    expect(a.stdout).toContain('(read-only)');
    const token = a.stdout.trim().split('\n').pop()!;
    expect((await app.request('GET', '/api/v1/projects', { token })).status).toBe(200);
    expect((await app.request('POST', '/api/v1/projects', { token, body: { name: 'nope' } })).body).toEqual(READ_ONLY);
    const b = await run('keys', 'create', '--email', u.email, '--scopes', 'read');
    expect(b.code).toBe(0);
    expect(b.stdout).toContain('(read-only)');
    const bad = await run('keys', 'create', '--email', u.email, '--scopes', 'write');
    expect(bad.code).not.toBe(0);
    expect(bad.stderr.trim().split('\n')).toHaveLength(1);
    const list = await run('keys', 'list', '--email', u.email);
    expect(list.stdout).toMatch(/cli-agent\t.*scopes read$/m);
  }, 120_000);
});

describe('a read-only key', () => {
  test('reads over REST, including the resume search sent by POST', async () => {
    expect((await app.request('GET', '/api/v1/projects', { token: ro })).status).toBe(200);
    expect((await app.request('GET', `/api/v1/projects/ro-proj/sessions/${SID(1)}`, { token: ro })).body.data.session.markdownContent).toBe('# hello\n');
    expect((await app.request('GET', '/api/v1/keys', { token: ro })).status).toBe(200);
    expect((await app.request('POST', '/api/v1/search/resume', { token: ro, body: { query: 'hello' } })).status).toBe(200);
  });

  test('gets 403 "This key is read-only" on every REST write, and nothing changes', async () => {
    const writes: [string, string, unknown?][] = [
      ['PUT', `/api/v1/projects/ro-proj/sessions/${SID(1)}`, { name: 's', markdown: '# changed\n' }],
      ['PATCH', `/api/v1/projects/ro-proj/sessions/${SID(1)}`, { name: 'renamed' }],
      ['DELETE', `/api/v1/projects/ro-proj/sessions/${SID(1)}`],
      ['POST', '/api/v1/projects', { name: 'new' }],
      ['PATCH', '/api/v1/projects/ro-proj', { name: 'renamed' }],
      ['DELETE', '/api/v1/projects/ro-proj'],
      ['POST', '/api/v1/keys', { name: 'escalate' }],
      ['DELETE', `/api/v1/keys/${u.keyId}`],
      ['POST', '/api/v1/device-codes', {}],
    ];
    for (const [method, url, body] of writes) {
      const r = await app.request(method, url, { token: ro, body });
      expect([method, url, r.status, r.body]).toEqual([method, url, 403, READ_ONLY]);
    }
    const s = await app.request('GET', `/api/v1/projects/ro-proj/sessions/${SID(1)}`, { token: u.token });
    expect(s.body.data.session).toMatchObject({ name: 's', markdownContent: '# hello\n' });
    expect((await app.request('GET', '/api/v1/keys', { token: u.token })).body.data.keys.some((k: any) => k.name === 'escalate')).toBe(false);
  });

  test('queries GraphQL but every mutation is FORBIDDEN "This key is read-only" (HTTP 403), nothing executed', async () => {
    const q = await app.gql(ro, '{ projects { id } }');
    expect(q.status).toBe(200);
    expect(q.body.data.projects.map((p: any) => p.id)).toContain('ro-proj');
    const mutations = [
      `mutation { deleteProject(id: "ro-proj") { project { id } } }`,
      `mutation { createApiKey(name: "escalate") { token } }`,
      `mutation { revokeApiKey(id: "${u.keyId}") { id } }`,
      `mutation { updateSession(projectId: "ro-proj", id: "${SID(1)}", input: { userTitle: "x" }) { id } }`,
    ];
    for (const m of mutations) {
      const r = await app.gql(ro, m);
      expect(r.status).toBe(403);
      expect(r.body.data ?? null).toBeNull();
      expect(r.body.errors).toEqual([
        expect.objectContaining({ message: 'This key is read-only', extensions: expect.objectContaining({ code: 'FORBIDDEN' }) }),
      ]);
    }
    const still = await app.gql(u.token, '{ projects { id } apiKeys { name revokedAt } }');
    expect(still.body.data.projects.map((p: any) => p.id)).toContain('ro-proj');
    expect(still.body.data.apiKeys.find((k: any) => k.name === 'test').revokedAt).toBeNull();
  });
});
