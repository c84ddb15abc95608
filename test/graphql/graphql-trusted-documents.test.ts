/**
 * Trusted documents (docs/graphql.md): `documentId` instead of `query` (POST, and GET for
 * queries); the console's documents come with its build; apps register theirs (instance
 * administrators; each id the sha256 of its text, each text valid against the schema);
 * GRAPHQL_TRUSTED_DOCUMENTS=cookie makes browser-session requests use ids, `all` every request.
 */
import { createHash } from 'node:crypto';
import consoleDocuments from '../../web/src/gql/persisted-documents.json';
import { operatorCtx } from '../../src/services/context';
import { createUser } from '../../src/services/users';
import { browser, type Browser } from '../support/cookie-client';
import { startTestApp, type TestApp, type TestUser } from '../support/app';

const PASSWORD = 'correct horse battery staple';
const idOf = (text: string) => `sha256:${createHash('sha256').update(text).digest('hex')}`;
const CONSOLE = consoleDocuments as Record<string, string>;
const PROJECTS_ID = Object.keys(CONSOLE).find((id) => CONSOLE[id].startsWith('query Projects '))!;

const APP_DOC = 'query AppProjects { projects { id name } }';
const APP_MUTATION = 'mutation AppCreate($name: String!) { createProject(input: { name: $name }) { id } }';

async function adminOf(app: TestApp, password?: string): Promise<TestUser> {
  const email = `docs-admin-${process.pid}-${Date.now()}-${Math.random().toString(36).slice(2)}@example.test`;
  const u = await createUser(operatorCtx(app.deps.db), email, 'Admin', { role: 'admin', ...(password ? { password } : {}) });
  return { id: u.id, email, ...(await app.newKey(u)) };
}

const post = (app: TestApp, token: string | null, body: unknown) => app.request('POST', '/api/v1/graphql', { token, body });

describe('GRAPHQL_TRUSTED_DOCUMENTS=off (the default)', () => {
  let app: TestApp;
  let admin: TestUser;
  let member: TestUser;
  beforeAll(async () => {
    app = await startTestApp({ env: { RATE_LIMIT_GRAPHQL_PER_HOUR: '100000' } });
    admin = await adminOf(app);
    member = await app.createUser('member');
  });
  afterAll(() => app?.close());

  test("a console document runs by its id; the answer is the same as the text's", async () => {
    const byId = await post(app, member.token, { documentId: PROJECTS_ID });
    expect(byId.status).toBe(200);
    expect(byId.body.errors).toBeUndefined();
    const byText = await post(app, member.token, { query: CONSOLE[PROJECTS_ID] });
    expect(byId.body).toEqual(byText.body);
    // The console's ids are the sha256 of their texts.
    for (const [id, text] of Object.entries(CONSOLE)) expect(idOf(text)).toBe(id);
  });

  test('an unknown id → 400 PERSISTED_QUERY_NOT_FOUND; a malformed one, or id and query together → 400', async () => {
    const unknown = await post(app, member.token, { documentId: idOf('query Nobody { projects { id } }') });
    expect(unknown.status).toBe(400);
    expect(unknown.body.errors[0].extensions.code).toBe('PERSISTED_QUERY_NOT_FOUND');
    const malformed = await post(app, member.token, { documentId: 'md5:abc' });
    expect(malformed.status).toBe(400);
    expect(malformed.body.errors[0].message).toBe('documentId must be "sha256:" and 64 lowercase hex digits');
    const both = await post(app, member.token, { documentId: PROJECTS_ID, query: '{ projects { id } }' });
    expect(both.status).toBe(400);
    expect(both.body.errors[0].message).toBe('Send either query or documentId, not both');
    const spoof = await post(app, member.token, { query: '{ projects { id } }', extensions: { documentId: PROJECTS_ID } });
    expect(spoof.status).toBe(400);
  });

  test('an administrator registers an app version: 201 {app, version, count}; its documents then run by id, queries through GET too', async () => {
    const r = await app.request('POST', '/api/v1/graphql/documents', {
      token: admin.token,
      body: { app: 'mobile', version: '1.4.0', documents: { [idOf(APP_DOC)]: APP_DOC, [idOf(APP_MUTATION)]: APP_MUTATION } },
    });
    expect(r.status).toBe(201);
    expect(r.body).toEqual({ app: 'mobile', version: '1.4.0', count: 2 });

    const q = await post(app, member.token, { documentId: idOf(APP_DOC) });
    expect(q.status).toBe(200);
    expect(Array.isArray(q.body.data.projects)).toBe(true);
    const get = await app.request('GET', `/api/v1/graphql?documentId=${idOf(APP_DOC)}`, {
      token: member.token,
      headers: { 'apollo-require-preflight': 'true' },
    });
    expect(get.status).toBe(200);
    expect(get.body.data.projects).toEqual(q.body.data.projects);
    // A mutation through GET → 405, and nothing is created.
    const m = await app.request('GET', `/api/v1/graphql?documentId=${idOf(APP_MUTATION)}&variables=${encodeURIComponent('{"name":"by-get"}')}`, {
      token: member.token,
      headers: { 'apollo-require-preflight': 'true' },
    });
    expect(m.status).toBe(405);
    const created = await post(app, member.token, { documentId: idOf(APP_MUTATION), variables: { name: 'by-post' } });
    expect(created.status).toBe(200);
    expect(created.body.data.createProject.id).toEqual(expect.any(String));

    const list = await app.request('GET', '/api/v1/graphql/documents?app=mobile', { token: admin.token });
    expect(list.status).toBe(200);
    expect(list.body.documents.map((d: { id: string; version: string }) => [d.id, d.version]).sort()).toEqual(
      [
        [idOf(APP_DOC), '1.4.0'],
        [idOf(APP_MUTATION), '1.4.0'],
      ].sort(),
    );
    const consoleList = await app.request('GET', '/api/v1/graphql/documents?app=session-archive-console', { token: admin.token });
    expect(consoleList.body.documents.length).toBe(Object.keys(CONSOLE).length);
  });

  test('registration names what is wrong: an id that is not the sha256 of its text, a document the schema refuses; nothing is stored', async () => {
    const bad = 'query Bad { projects { noSuchField } }';
    const wrongId = await app.request('POST', '/api/v1/graphql/documents', {
      token: admin.token,
      body: { app: 'web', version: '2', documents: { [idOf('something else')]: APP_DOC } },
    });
    expect(wrongId.status).toBe(400);
    expect(wrongId.body.errors[0].message).toContain(idOf('something else'));
    const invalid = await app.request('POST', '/api/v1/graphql/documents', {
      token: admin.token,
      body: { app: 'web', version: '2', documents: { [idOf(APP_DOC)]: APP_DOC, [idOf(bad)]: bad } },
    });
    expect(invalid.status).toBe(400);
    expect(invalid.body.errors[0].message).toMatch(
      new RegExp(`Documents that do not validate against the schema: ${idOf(bad)} \\(Cannot query field "noSuchField"`),
    );
    const list = await app.request('GET', '/api/v1/graphql/documents?app=web', { token: admin.token });
    expect(list.body.documents).toEqual([]);
    for (const body of [
      {},
      { app: 'web', version: '2', documents: {} },
      { app: '', version: '2', documents: { a: 'b' } },
      { app: 'web', version: 2, documents: { a: 'b' } },
    ]) {
      const r = await app.request('POST', '/api/v1/graphql/documents', { token: admin.token, body });
      expect([body, r.status]).toEqual([body, 400]);
    }
  });

  test('only instance administrators register or list (403); without a key 401; other methods 405', async () => {
    const r = await app.request('POST', '/api/v1/graphql/documents', {
      token: member.token,
      body: { app: 'x', version: '1', documents: { [idOf(APP_DOC)]: APP_DOC } },
    });
    expect(r.status).toBe(403);
    expect(r.body.errors[0].message).toBe('Only instance administrators can manage trusted documents');
    expect((await app.request('GET', '/api/v1/graphql/documents', { token: member.token })).status).toBe(403);
    expect((await app.request('GET', '/api/v1/graphql/documents')).status).toBe(401);
    expect((await app.request('DELETE', '/api/v1/graphql/documents', { token: admin.token })).status).toBe(405);
  });
});

describe('GRAPHQL_TRUSTED_DOCUMENTS=cookie', () => {
  let app: TestApp;
  let admin: TestUser;
  let b: Browser;
  beforeAll(async () => {
    app = await startTestApp({ env: { GRAPHQL_TRUSTED_DOCUMENTS: 'cookie', RATE_LIMIT_GRAPHQL_PER_HOUR: '100000' } });
    admin = await adminOf(app, PASSWORD);
    b = browser(app);
    expect((await b.signIn(admin.email, PASSWORD)).status).toBe(200);
  });
  afterAll(() => app?.close());

  test('the browser session runs registered ids; its raw query → 400 PERSISTED_QUERY_NOT_IN_LIST; a key still sends text', async () => {
    const byId = await b.request('POST', '/api/v1/graphql', { body: { documentId: PROJECTS_ID } });
    expect(byId.status).toBe(200);
    expect(byId.body.errors).toBeUndefined();
    const raw = await b.request('POST', '/api/v1/graphql', { body: { query: '{ projects { id } }' } });
    expect(raw.status).toBe(400);
    expect(raw.body.errors[0].extensions.code).toBe('PERSISTED_QUERY_NOT_IN_LIST');
    const key = await post(app, admin.token, { query: '{ projects { id } }' });
    expect(key.status).toBe(200);
  });
});

describe('GRAPHQL_TRUSTED_DOCUMENTS=all', () => {
  let app: TestApp;
  let member: TestUser;
  beforeAll(async () => {
    app = await startTestApp({ env: { GRAPHQL_TRUSTED_DOCUMENTS: 'all' } });
    member = await app.createUser('member');
  });
  afterAll(() => app?.close());

  test('every request must send an id: a key with text → 400 PERSISTED_QUERY_NOT_IN_LIST; by id → 200', async () => {
    const raw = await post(app, member.token, { query: '{ projects { id } }' });
    expect(raw.status).toBe(400);
    expect(raw.body.errors[0].extensions.code).toBe('PERSISTED_QUERY_NOT_IN_LIST');
    expect((await post(app, member.token, { documentId: PROJECTS_ID })).status).toBe(200);
  });
});
