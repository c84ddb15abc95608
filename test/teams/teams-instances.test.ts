/**
 * Membership changes apply from the very next request on every instance, search included: two
 * real service processes (`tsx src/main.ts`, each with its own memory, so nothing one of them
 * could remember is shared with the other) on one database and one search engine. A member
 * demoted through one instance cannot write on the other from its next request; a member removed
 * through one instance reads nothing of the team on the other from its next request, and their
 * searches there neither return nor count the team's sessions. Each time the member's previous
 * request went to the other instance just before, so that anything it kept would be stale.
 */
import crypto from 'node:crypto';
import { Meilisearch } from 'meilisearch';
import { createDb } from '../../src/db/client';
import { createNodeHttpClient } from '../../src/search/engine/http-client';
import { indexUidOf, recentUidOf } from '../../src/search/engine/index-settings';
import { createApiKey } from '../../src/services/keys';
import { operatorCtx } from '../../src/services/context';
import { createUser } from '../../src/services/users';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { eventually } from '../support/eventually';
import { testDataDir } from '../support/meili-engine';
import { JWT_SECRET, ServerProcess } from '../support/server-process';

interface Caller {
  id: string;
  email: string;
  token: string;
}

let db: TestDatabase;
let one: ServerProcess;
let two: ServerProcess;
let admin: Caller;
let member: Caller;
let teamId: string;
const P = 'instances-proj';
const S_ADMIN = crypto.randomUUID();
const S_MEMBER = crypto.randomUUID();
const WORD = Array.from(crypto.randomBytes(12), (b) => String.fromCharCode(97 + (b % 26))).join('');

beforeAll(async () => {
  db = await createTestDatabase('sa_instances');
  const handles = createDb(db.url);
  try {
    const caller = async (name: string): Promise<Caller> => {
      const email = `${name}-${crypto.randomBytes(4).toString('hex')}@example.test`;
      const u = await createUser(operatorCtx(handles), email, name);
      return { id: u.id, email, token: (await createApiKey(operatorCtx(handles, { jwtSecret: JWT_SECRET }), { name }, u.id)).token };
    };
    admin = await caller('admin');
    member = await caller('member');
  } finally {
    await handles.close();
  }
  // The run's engine (global setup), an index of this database's own (namespace).
  // The search worker on (WORKERS_ENABLED): both instances apply index work, as in production.
  const env = { MEILI_URL: process.env.MEILI_URL ?? '', MEILI_MASTER_KEY: process.env.MEILI_MASTER_KEY ?? '', NAMESPACE: db.name, WORKERS_ENABLED: 'true' };
  [one, two] = await Promise.all([ServerProcess.start(db.url, testDataDir(), env), ServerProcess.start(db.url, testDataDir(), env)]);
}, 120_000);

afterAll(async () => {
  await Promise.all([one?.stop(), two?.stop()]);
  if (process.env.MEILI_URL && db) {
    const httpClient = createNodeHttpClient();
    const client = new Meilisearch({ host: process.env.MEILI_URL, apiKey: process.env.MEILI_MASTER_KEY || undefined, httpClient, timeout: 5000 });
    for (const uid of [indexUidOf(db.name), recentUidOf(indexUidOf(db.name))]) await client.deleteIndex(uid).catch(() => undefined);
    httpClient.destroy();
  }
  await db?.drop();
}, 60_000);

const rest = (on: ServerProcess, u: Caller, method: string, path: string, body?: unknown) => on.request(method, path, { token: u.token, body });

async function search(on: ServerProcess, u: Caller): Promise<{ total: number; ids: string[] }> {
  const r = await on.request('POST', '/api/v1/graphql', {
    token: u.token,
    body: { query: 'query($q: String!) { searchSessions(query: $q, limit: 50) { total results { sessionId } } }', variables: { q: WORD } },
  });
  expect([r.status, r.body.errors]).toEqual([200, undefined]);
  const s = r.body.data.searchSessions;
  return { total: s.total, ids: s.results.map((x: { sessionId: string }) => x.sessionId).sort() };
}

/** What the member reads of the team on an instance: project, a session, lists, stats, search. */
async function reads(on: ServerProcess) {
  const gql = await on.request('POST', '/api/v1/graphql', {
    token: member.token,
    body: { query: '{ stats { totalSessions totalProjects } sessions(limit: 10) { id } projects { id } }' },
  });
  expect(gql.body.errors).toBeUndefined();
  return {
    project: (await rest(on, member, 'GET', `/api/v1/projects/${P}`)).status,
    session: (await rest(on, member, 'GET', `/api/v1/projects/${P}/sessions/${S_ADMIN}`)).status,
    stats: gql.body.data.stats,
    sessions: gql.body.data.sessions.map((s: { id: string }) => s.id).sort(),
    projects: gql.body.data.projects.map((p: { id: string }) => p.id),
    search: await search(on, member),
  };
}

const both = [S_ADMIN, S_MEMBER].sort();
const asMember = { project: 200, session: 200, stats: { totalSessions: 2, totalProjects: 1 }, sessions: both, projects: [P], search: { total: 2, ids: both } };
const asOutsider = { project: 403, session: 403, stats: { totalSessions: 0, totalProjects: 0 }, sessions: [], projects: [], search: { total: 0, ids: [] } };

test('the team, its project and both members’ sessions, written through both instances, are found on both', async () => {
  const t = await rest(one, admin, 'POST', '/api/v1/teams', { name: 'Instances' });
  expect(t.status).toBe(201);
  teamId = t.body.data.team.id;
  expect((await rest(one, admin, 'POST', `/api/v1/teams/${teamId}/members`, { email: member.email, role: 'member' })).status).toBe(201);
  expect((await rest(one, admin, 'POST', '/api/v1/projects', { id: P, name: 'Instances', teamId })).status).toBe(201);
  expect((await rest(one, admin, 'PUT', `/api/v1/projects/${P}/sessions/${S_ADMIN}`, { name: 'by admin', markdown: `# admin\n\n${WORD}` })).status).toBe(201);
  expect((await rest(two, member, 'PUT', `/api/v1/projects/${P}/sessions/${S_MEMBER}`, { name: 'by member', markdown: `# member\n\n${WORD}` })).status).toBe(
    201,
  );
  for (const on of [one, two]) {
    await eventually('both sessions to be found', async () => (await search(on, member)).total === 2, 60_000).catch((err) => {
      throw new Error(`${(err as Error).message}\n--- instance one:\n${one.output}\n--- instance two:\n${two.output}`);
    });
  }
  expect(await reads(two)).toEqual(asMember);
  expect(await reads(one)).toEqual(asMember);
}, 120_000);

test('demoted to viewer through one instance: the next write on the other is refused, reads and search go on', async () => {
  const patch = (on: ServerProcess) => rest(on, member, 'PATCH', `/api/v1/projects/${P}/sessions/${S_MEMBER}`, { tags: ['x'] });
  const put = (on: ServerProcess) => rest(on, member, 'PUT', `/api/v1/projects/${P}/sessions/${crypto.randomUUID()}`, { name: 'new', markdown: 'new' });
  // Just before: the member writes on instance two.
  expect((await patch(two)).status).toBe(200);
  const demote = await rest(one, admin, 'PATCH', `/api/v1/teams/${teamId}/members/${member.id}`, { role: 'viewer' });
  expect([demote.status, demote.body.data.member.role]).toEqual([200, 'viewer']);
  expect((await patch(two)).status).toBe(403);
  expect((await put(two)).status).toBe(403);
  expect(await reads(two)).toEqual(asMember);
  // And the other way round: promoted again through instance two, the member writes on one.
  expect((await patch(one)).status).toBe(403);
  expect((await rest(two, admin, 'PATCH', `/api/v1/teams/${teamId}/members/${member.id}`, { role: 'member' })).status).toBe(200);
  expect((await patch(one)).status).toBe(200);
});

test('removed through one instance: from the next request on the other, nothing of the team is read, listed, counted or found', async () => {
  // Just before: the member reads and searches on instance two.
  expect(await reads(two)).toEqual(asMember);
  expect((await rest(one, admin, 'DELETE', `/api/v1/teams/${teamId}/members/${member.id}`)).status).toBe(200);
  expect(await reads(two)).toEqual(asOutsider);
  expect(await reads(one)).toEqual(asOutsider);
  expect((await rest(two, member, 'PUT', `/api/v1/projects/${P}/sessions/${crypto.randomUUID()}`, { name: 'new', markdown: 'new' })).status).toBe(403);
  expect((await rest(two, member, 'GET', `/api/v1/teams/${teamId}`)).status).toBe(404);
  // Added again through instance two: the next request on one reads and finds everything again.
  expect(await reads(one)).toEqual(asOutsider);
  expect((await rest(two, admin, 'POST', `/api/v1/teams/${teamId}/members`, { email: member.email, role: 'viewer' })).status).toBe(201);
  expect(await reads(one)).toEqual(asMember);
});
