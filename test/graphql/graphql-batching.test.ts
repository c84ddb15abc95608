import { startTestApp, type TestApp, type TestUser } from '../support/app';
import { countOn } from '../support/statements';

/**
 * Batching: a query over many projects and sessions costs a bounded number of SQL
 * statements, counted at the driver (support/statements.ts).
 */

let app: TestApp;
let statements = 0;
let counting = false;

const QUERY = '{ projects { sessionCount lastActivity sessions(limit: 5) { id name project { name } metadata { tags } } } }';

async function seed(user: TestUser, projects: number, prefix: string): Promise<void> {
  for (let p = 0; p < projects; p++) {
    for (let s = 0; s < 3; s++) {
      const id = `${String(p).padStart(8, '0')}-0000-4000-8000-${String(s).padStart(12, '0')}`;
      const r = await app.request('PUT', `/api/v1/projects/${prefix}-${p}/sessions/${id}`, {
        token: user.token,
        body: { name: `s${p}-${s}`, markdown: `# ${p} ${s}`, metadata: { tags: [`t${s}`] } },
      });
      expect(r.status).toBe(201);
    }
  }
}

async function measure(user: TestUser): Promise<{ n: number; body: any }> {
  // Warm-up: the first request of a key also records lastUsedAt (once per minute).
  await app.request('POST', '/api/v1/graphql', { token: user.token, body: { query: '{ apiKeys { id } }' } });
  await new Promise((r) => setTimeout(r, 50));
  statements = 0;
  counting = true;
  const r = await app.request('POST', '/api/v1/graphql', { token: user.token, body: { query: QUERY } });
  counting = false;
  expect(r.status).toBe(200);
  expect(r.body.errors).toBeUndefined();
  return { n: statements, body: r.body };
}

beforeAll(async () => {
  // No outbox worker: its polling would share the counted pool and blur the statement count.
  app = await startTestApp({ env: { WORKERS_ENABLED: 'false' } });
  // GraphQL queries read through the read pool, inside one snapshot; count both pools.
  const count = () => {
    if (counting) statements++;
  };
  countOn(app.deps.db.pool, count);
  countOn(app.deps.db.readPool, count);
});
afterAll(() => app?.close());

test('the same number of statements for 3 projects and for 30', async () => {
  const few = await app.createUser('few');
  const many = await app.createUser('many');
  await seed(few, 3, 'few');
  await seed(many, 30, 'many');

  const small = await measure(few);
  const large = await measure(many);
  expect(small.body.data.projects).toHaveLength(3);
  expect(large.body.data.projects).toHaveLength(30);
  for (const p of large.body.data.projects) {
    expect(p.sessionCount).toBe(3);
    expect(p.sessions).toHaveLength(3);
    expect(p.sessions[0].metadata.tags).toHaveLength(1);
    expect(new Set(p.sessions.map((s: any) => s.project.name)).size).toBe(1);
  }
  // The counter sees Prisma's statements too, not just authentication's.
  expect(small.n).toBe(3);
  expect(large.n).toBe(small.n);
  // authentication (1) + projects (1) + Project.sessions for all projects (1)
  expect(large.n).toBeLessThanOrEqual(4);
});

test('markdownContent and Project.stats batch too', async () => {
  const u = await app.createUser('content');
  await seed(u, 4, 'content');
  const q =
    '{ projects { stats { totalSessions uniqueLLMModels topTags { tag } sessionsByDay(days: 2) { count } } sessions(limit: 3) { markdownContent project { id } } } }';
  await app.request('POST', '/api/v1/graphql', { token: u.token, body: { query: '{ apiKeys { id } }' } });
  await new Promise((r) => setTimeout(r, 50));
  statements = 0;
  counting = true;
  const r = await app.request('POST', '/api/v1/graphql', { token: u.token, body: { query: q } });
  counting = false;
  expect(r.body.errors).toBeUndefined();
  expect(r.body.data.projects).toHaveLength(4);
  expect(r.body.data.projects[0].sessions[0].markdownContent).toMatch(/^# \d \d$/);
  expect(r.body.data.projects[0].stats.totalSessions).toBe(3);
  // auth + projects + sessions + markdown + totals + labels + topTags + byDay
  expect(statements).toBe(8);
});
