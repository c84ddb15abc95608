/**
 * PATCH project (the project's fields directly in `data`) and the upload CLI's endpoints as the
 * real clients use them: requests built exactly
 * as the upload CLI and both SDKs build them (test/support/specstory-clients.ts).
 */
import { startTestApp, type TestApp, type TestUser } from '../support/app';
import { cliApi, cliBare, pySdk, tsSdk } from '../support/specstory-clients';

let app: TestApp;
let a: TestUser;
let b: TestUser;

beforeAll(async () => {
  app = await startTestApp();
  a = await app.createUser('a');
  b = await app.createUser('b');
});
afterAll(() => app?.close());

describe('PATCH /api/v1/projects/{id}: the fields directly in data', () => {
  test.each([
    ['TypeScript SDK', tsSdk],
    ['Python SDK', pySdk],
  ])('%s: update() reads data.name, data.icon, data.color', async (_name, sdk) => {
    const id = `sdk-${_name.split(' ')[0].toLowerCase()}`;
    expect((await sdk(app, a.token, 'POST', '/api/v1/projects', { id, name: 'Before' })).status).toBe(201);
    const r = await sdk(app, a.token, 'PATCH', `/api/v1/projects/${id}`, { name: 'Après <&>', color: 'rose' });
    expect(r.status).toBe(200);
    expect(r.body.success).toBe(true);
    expect(r.body.data).toMatchObject({ id, name: 'Après <&>', icon: 'Code2', color: 'rose', sessionCount: 0 });
    expect(r.body.data.project).toBeUndefined();
    expect(r.body.data.lastUpdated).toBe(r.body.data.lastActivity);
    // The same project a GET returns.
    const g = await sdk(app, a.token, 'GET', `/api/v1/projects/${id}`);
    expect(g.body.data.project).toEqual(r.body.data);
  });

  test('errors keep the envelope: another user → 403, unknown → 404, bad icon → 400', async () => {
    expect(await tsSdk(app, b.token, 'PATCH', '/api/v1/projects/sdk-typescript', { name: 'x' })).toMatchObject({
      status: 403,
      body: { success: false, error: 'Insufficient permissions' },
    });
    expect((await tsSdk(app, a.token, 'PATCH', '/api/v1/projects/none-here', { name: 'x' })).status).toBe(404);
    const bad = await pySdk(app, a.token, 'PATCH', '/api/v1/projects/sdk-python', { icon: 'code2' });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatch(/^Invalid value for icon\. Must be one of: Code2, /);
  });
});

describe('GET /api/v1/billing/entitlement (as the upload CLI reads it)', () => {
  test('what this server implements, as GetEntitlement decodes it', async () => {
    const r = await cliApi(app, a.token, 'GET', '/api/v1/billing/entitlement');
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toMatch(/^application\/json/);
    expect(r.body).toEqual({
      success: true,
      data: { plan: 'self-hosted', features: { resume: true, skills: false, knowledge_base: false, work_tracking: false, governance: false } },
    });
  });

  test('needs a token like every /api route', async () => {
    expect(await cliApi(app, 'not-a-token', 'GET', '/api/v1/billing/entitlement')).toMatchObject({
      status: 401,
      body: { success: false, error: 'Invalid session token' },
    });
  });
});

describe('GET …/sessions/sizes before the first sync', () => {
  test('a project the caller does not have yet → 200 with no sessions, and nothing is created', async () => {
    const r = await cliBare(app, a.token, 'GET', '/api/v1/projects/833c-d926-f753-7b4a/sessions/sizes');
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ success: true, data: { sessions: {} } });
    expect((await cliApi(app, a.token, 'GET', '/api/v1/projects/833c-d926-f753-7b4a')).status).toBe(404);
  });

  test("another user's project stays 403; an impossible id stays 404", async () => {
    expect((await tsSdk(app, a.token, 'POST', '/api/v1/projects', { id: 'owned-by-a', name: 'A' })).status).toBe(201);
    expect(await cliBare(app, b.token, 'GET', '/api/v1/projects/owned-by-a/sessions/sizes')).toMatchObject({
      status: 403,
      body: { success: false, error: 'Insufficient permissions' },
    });
    expect((await cliBare(app, a.token, 'GET', '/api/v1/projects/-nope/sessions/sizes')).status).toBe(404);
  });
});

describe('projects carry lastUpdated (= lastActivity)', () => {
  test('list and detail', async () => {
    const list = await cliApi(app, a.token, 'GET', '/api/v1/projects');
    expect(list.body.data.projects.length).toBeGreaterThan(0);
    for (const p of list.body.data.projects) expect(p.lastUpdated).toBe(p.lastActivity);
  });
});
