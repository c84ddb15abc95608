/**
 * Cross-machine resume as the upload CLI drives it (resume_client.go): the two
 * ?resumable=true lists, POST /search/resume with STX/ETX snippets across projects, and the
 * session data blob fetched for the resume itself.
 */
import crypto from 'node:crypto';
import type { Search } from '../../src/search';
import { upsertSession } from '../../src/services/session-upload';
import { startTestApp, type TestApp, type TestUser } from '../support/app';
import { eventually } from '../support/eventually';
import { cliApi, cliFetchSessionData, cliPut, CLI_VERSION, type CliUpload } from '../support/specstory-clients';

let app: TestApp;
let a: TestUser;
let b: TestUser;

const sid = () => crypto.randomUUID();
const STX = '\u0002';
const ETX = '\u0003';

function upload(projectId: string, id: string, markdown: string, sessionData?: string): CliUpload {
  return {
    projectId,
    projectName: `Name of ${projectId}`,
    name: `session-${id.slice(0, 8)}`,
    markdown,
    rawData: '{"type":"user"}\n',
    sessionData,
    metadata: {
      clientName: 'specstory-cli',
      clientVersion: CLI_VERSION,
      agentName: 'Claude Code',
      deviceId: 'dev-a',
      machineName: 'ada-laptop',
      title: 'A title',
    },
  };
}
const blob = (id: string) => JSON.stringify({ schemaVersion: '1.0', sessionId: id, exchanges: [] });

/** Sessions of user a, in upload order (each later one is newer). */
const s = {
  p1old: sid(),
  p1bare: sid(),
  p1new: sid(),
  p2: sid(),
  p3bare: sid(),
};

beforeAll(async () => {
  app = await startTestApp({ env: { RATE_LIMIT_REST_PER_HOUR: '100000' } });
  a = await app.createUser('a');
  b = await app.createUser('b');
  const put = async (u: TestUser, p: string, id: string, md: string, data?: string) => {
    const r = await cliPut(app, u.token, p, id, upload(p, id, md, data));
    expect(r.status).toBe(201);
    // Distinct updatedAt for a stable "newest first".
    await new Promise((res) => setTimeout(res, 5));
  };
  await put(a, 'res-p1', s.p1old, '# Flaky websocket\n\n_**User**_\n\nThe websocket reconnect loop <hangs> & spins.\n', blob(s.p1old));
  await put(a, 'res-p1', s.p1bare, '# Websocket notes\n\nwebsocket reconnect without session data\n');
  await put(a, 'res-p1', s.p1new, '# Reconnect\n\n_**User**_\n\nFix the websocket reconnect backoff.\n', blob(s.p1new));
  await put(a, 'res-p2', s.p2, '# Other repo\n\n_**User**_\n\nwebsocket reconnect in the mobile app\n', blob(s.p2));
  await put(a, 'res-p3', s.p3bare, '# Only legacy\n\nwebsocket reconnect\n');
  await put(b, 'res-b', sid(), '# B\n\nwebsocket reconnect for b\n', blob('b'));
  await eventually('the search index to catch up', async () => (await (app.deps.search as unknown as Search).backlog()) === 0, 60_000);
}, 120_000);
afterAll(() => app?.close());

describe('GET /api/v1/projects?resumable=true (ListCloudProjects)', () => {
  test('only projects with a resumable session, each with those sessions newest first, no content', async () => {
    const r = await cliApi(app, a.token, 'GET', '/api/v1/projects?resumable=true');
    expect(r.status).toBe(200);
    const projects = r.body.data.projects;
    expect(projects.map((p: any) => p.id).sort()).toEqual(['res-p1', 'res-p2']);
    expect(r.body.data.total).toBe(2);
    const p1 = projects.find((p: any) => p.id === 'res-p1');
    expect(p1).toMatchObject({ name: 'Name of res-p1', icon: 'Code2', color: 'blue', sessionCount: 3 });
    expect(p1.lastUpdated).toBe(p1.lastActivity);
    expect(p1.sessions.map((x: any) => x.id)).toEqual([s.p1new, s.p1old]);
    for (const x of p1.sessions) {
      expect(x).toMatchObject({ clientId: x.id, projectId: 'res-p1', sessionDataSize: Buffer.byteLength(blob(x.id)) });
      expect(x.metadata).toMatchObject({ agentName: 'Claude Code', deviceId: 'dev-a', machineName: 'ada-laptop', title: 'A title' });
      expect(x.markdownContent).toBeUndefined();
      expect(x.sessionData).toBeUndefined();
    }
    // Without the flag: every project, no inline sessions.
    const all = await cliApi(app, a.token, 'GET', '/api/v1/projects');
    expect(all.body.data.projects.map((p: any) => p.id).sort()).toEqual(['res-p1', 'res-p2', 'res-p3']);
    expect(all.body.data.projects[0].sessions).toBeUndefined();
  });

  test('another user sees only their own; a bad flag value → 400', async () => {
    const r = await cliApi(app, b.token, 'GET', '/api/v1/projects?resumable=true');
    expect(r.body.data.projects.map((p: any) => p.id)).toEqual(['res-b']);
    expect(await cliApi(app, a.token, 'GET', '/api/v1/projects?resumable=yes')).toMatchObject({
      status: 400,
      body: { success: false, error: 'Invalid value for resumable: must be true or false' },
    });
  });
});

describe('GET /api/v1/projects/{id}/sessions?resumable=true (ListCloudSessions)', () => {
  test('the resumable sessions of the project, newest first', async () => {
    const r = await cliApi(app, a.token, 'GET', '/api/v1/projects/res-p1/sessions?resumable=true');
    expect(r.status).toBe(200);
    expect(r.body.data.sessions.map((x: any) => x.id)).toEqual([s.p1new, s.p1old]);
    expect(r.body.data).toMatchObject({ total: 2, projectId: 'res-p1', nextCursor: null });
    expect((await cliApi(app, a.token, 'GET', '/api/v1/projects/res-p3/sessions?resumable=true')).body.data.sessions).toEqual([]);
    expect((await cliApi(app, b.token, 'GET', '/api/v1/projects/res-p1/sessions?resumable=true')).status).toBe(403);
    expect((await cliApi(app, a.token, 'GET', '/api/v1/projects/res-none/sessions?resumable=true')).status).toBe(404);
  });

  test('the complete set: more sessions than one page of the plain list', async () => {
    // Seeded through the session service (the uploads themselves are tested elsewhere).
    const ctx = { deps: app.deps, user: { id: a.id, keyId: a.keyId }, log: app.deps.logger };
    const ids = Array.from({ length: 210 }, () => sid());
    for (const id of ids) {
      const r = await upsertSession(ctx, 'res-many', id, { name: 'many', markdown: '# many\n', sessionData: blob(id) });
      expect(r.created).toBe(true);
    }
    const r = await cliApi(app, a.token, 'GET', '/api/v1/projects/res-many/sessions?resumable=true');
    expect(r.body.data.sessions.length).toBe(210);
    expect(new Set(r.body.data.sessions.map((x: any) => x.id))).toEqual(new Set(ids));
    const plain = await cliApi(app, a.token, 'GET', '/api/v1/projects/res-many/sessions');
    expect(plain.body.data.sessions.length).toBe(200);
  }, 120_000);
});

describe('POST /api/v1/search/resume (SearchCloudSessions)', () => {
  test('across projects: resumable sessions matching every word, newest first, STX/ETX snippets', async () => {
    const r = await cliApi(app, a.token, 'POST', '/api/v1/search/resume', { query: 'websocket reconnect' });
    expect(r.status).toBe(200);
    const results = r.body.data.results;
    expect(results.map((x: any) => x.id)).toEqual([s.p2, s.p1new, s.p1old]);
    expect(results.map((x: any) => x.projectName)).toEqual(['Name of res-p2', 'Name of res-p1', 'Name of res-p1']);
    for (const x of results) {
      expect(x.clientId).toBe(x.id);
      expect(x.sessionDataSize).toBeGreaterThan(0);
      expect(x.snippet).toContain(`${STX}websocket${ETX}`);
      expect(x.snippet).toContain(`${STX}reconnect${ETX}`);
      expect(x.snippet).not.toMatch(/<\/?mark>|&lt;|&amp;/);
    }
    // Text is literal, not HTML-escaped.
    expect(results[2].snippet).toContain('<hangs> & spins');
  });

  test('scoped to one project; another user’s project matches nothing; words must all match', async () => {
    const one = await cliApi(app, a.token, 'POST', '/api/v1/search/resume', { query: 'websocket reconnect', projectId: 'res-p1' });
    expect(one.body.data.results.map((x: any) => x.id)).toEqual([s.p1new, s.p1old]);
    const theirs = await cliApi(app, a.token, 'POST', '/api/v1/search/resume', { query: 'websocket', projectId: 'res-b' });
    expect(theirs.body).toEqual({ success: true, data: { results: [] } });
    const all = await cliApi(app, a.token, 'POST', '/api/v1/search/resume', { query: 'websocket backoff' });
    expect(all.body.data.results.map((x: any) => x.id)).toEqual([s.p1new]);
    const forB = await cliApi(app, b.token, 'POST', '/api/v1/search/resume', { query: 'websocket reconnect' });
    expect(forB.body.data.results.map((x: any) => x.projectId)).toEqual(['res-b']);
  });

  test('bad bodies → 400 with the envelope', async () => {
    expect(await cliApi(app, a.token, 'POST', '/api/v1/search/resume', {})).toMatchObject({
      status: 400,
      body: { success: false, error: 'Missing required field: query' },
    });
    expect((await cliApi(app, a.token, 'POST', '/api/v1/search/resume', { query: '   ' })).status).toBe(400);
    expect((await cliApi(app, a.token, 'POST', '/api/v1/search/resume', { query: 5 })).status).toBe(400);
    expect((await cliApi(app, a.token, 'POST', '/api/v1/search/resume', { query: 'x', projectId: 7 })).status).toBe(400);
  });

  test('then the resume itself: the blob of a hit', async () => {
    const g = await cliFetchSessionData(app, a.token, 'res-p2', s.p2);
    expect(g.status).toBe(200);
    expect(g.text).toBe(blob(s.p2));
  });
});
