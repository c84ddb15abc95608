import { SID, startTestApp, type TestApp, type TestUser } from '../support/app';

let app: TestApp;
let a: TestUser;

beforeAll(async () => {
  app = await startTestApp();
  a = await app.createUser('conc');
});
afterAll(() => app.close());

test('20 parallel PUTs with different content to one session leave exactly one complete version', async () => {
  const url = `/api/v1/projects/race/sessions/${SID(1)}`;
  const bodies = Array.from({ length: 20 }, (_, i) => ({
    name: `version ${i}`,
    // Different sizes (some span several 1 MiB chunks) so that a mix would be visible.
    markdown: `# v${i}\n` + String.fromCharCode(0x61 + i).repeat(1000 + i * 120_000),
    rawData: `raw-${i}-` + 'r'.repeat(i * 1000),
    startedAt: '2024-01-01T00:00:00.000Z',
    endedAt: '2024-01-01T01:00:00.000Z',
    metadata: { tags: [`t${i}`], clientName: `c${i}` },
  }));
  const results = await Promise.all(bodies.map((body) => app.request('PUT', url, { token: a.token, body })));
  for (const r of results) expect([200, 201]).toContain(r.status);
  expect(results.filter((r) => r.status === 201)).toHaveLength(1);

  const got = await app.request('GET', url, { token: a.token });
  expect(got.status).toBe(200);
  const s = got.body.data.session;
  const i = bodies.findIndex((b) => b.name === s.name);
  expect(i).toBeGreaterThanOrEqual(0);
  const win = bodies[i];
  expect(s.markdownContent === win.markdown).toBe(true);
  expect(s.markdownSize).toBe(Buffer.byteLength(win.markdown));
  expect(s.rawDataSize).toBe(Buffer.byteLength(win.rawData));
  expect(s.metadata.tags).toEqual(win.metadata.tags);
  expect(s.metadata.clientName).toBe(win.metadata.clientName);
  const raw = await app.request('GET', `${url}/raw`, { token: a.token });
  expect(raw.text).toBe(win.rawData);

  // The stored etag is the etag of the stored content: re-sending the winner is a no-op.
  const again = await app.request('PUT', url, { token: a.token, body: win });
  expect(again.status).toBe(200);
  expect(again.body.data.etag).toBe(s.etag);
  expect(again.body.data.updatedAt).toBe(s.updatedAt);
  // And the winner's own PUT response carried that etag.
  const winnerResponses = results.filter((r) => r.body.data.etag === s.etag);
  expect(winnerResponses.length).toBeGreaterThanOrEqual(1);

  const list = await app.request('GET', '/api/v1/projects/race/sessions', { token: a.token });
  expect(list.body.data.total).toBe(1);
  expect(list.body.data.sessions[0].etag).toBe(s.etag);
  const [labels] = await app.deps.db.pool.query("SELECT COUNT(*) AS n FROM session_labels WHERE projectId = 'race' AND kind <> ''");
  expect(Number(labels.n)).toBe(1);
});

test('parallel PUTs to 20 different sessions of a new project all land and create the project once', async () => {
  const project = 'fresh-conc';
  const results = await Promise.all(
    Array.from({ length: 20 }, (_, i) =>
      app.request('PUT', `/api/v1/projects/${project}/sessions/${SID(100 + i)}`, {
        token: a.token,
        body: { name: `s${i}`, markdown: `content ${i}`, projectName: `Name ${i}` },
      }),
    ),
  );
  expect(results.map((r) => r.status)).toEqual(Array(20).fill(201));
  const list = await app.request('GET', `/api/v1/projects/${project}/sessions?limit=100`, { token: a.token });
  expect(list.body.data.total).toBe(20);
  expect(new Set(list.body.data.sessions.map((s: any) => s.id)).size).toBe(20);
  const projects = await app.request('GET', '/api/v1/projects', { token: a.token });
  const mine = projects.body.data.projects.filter((p: any) => p.id === project);
  expect(mine).toHaveLength(1);
  expect(mine[0].sessionCount).toBe(20);
  expect(mine[0].name).toMatch(/^Name \d+$/);
  for (let i = 0; i < 20; i++) {
    const g = await app.request('GET', `/api/v1/projects/${project}/sessions/${SID(100 + i)}`, { token: a.token, headers: { Accept: 'text/markdown' } });
    expect(g.text).toBe(`content ${i}`);
  }
});

test('parallel first PUTs by two users to one new project id: one owner, the other gets 403', async () => {
  const b = await app.createUser('conc-b');
  const users = [a, b, a, b, a, b];
  const results = await Promise.all(
    users.map((u, i) => app.request('PUT', `/api/v1/projects/contested/sessions/${SID(200 + i)}`, { token: u.token, body: { name: 's', markdown: 'm' } })),
  );
  const winners = new Set(results.map((r, i) => (r.status === 201 ? users[i].id : null)).filter(Boolean));
  expect(winners.size).toBe(1);
  for (let i = 0; i < users.length; i++) {
    expect(results[i].status).toBe(winners.has(users[i].id) ? 201 : 403);
  }
});
