/**
 * Redaction on every write path: secrets written by REST PATCH (session name,
 * userTitle, tags; project name), project creation, and the GraphQL mutations that write text
 * (updateSession, createProject, updateProject, createApiKey) are masked before they are stored
 * or indexed, counted in the session's findings, and never found by search.
 */
import crypto from 'node:crypto';
import { buildCorpus } from '../../scripts/gen-redact-corpus';
import type { Search } from '../../src/search';
import { startTestApp, type TestApp, type TestUser } from '../support/app';
import { eventually } from '../support/eventually';

jest.setTimeout(180_000);

const corpus = buildCorpus();
const secretOf = (format: string) => corpus.positives.find((p) => p.format === format)!.secret;
const githubToken = secretOf('github-pat');
const npmToken = secretOf('npm-token');
const MARKER = 'wombatpatchmarker';

let app: TestApp;
let u: TestUser;

beforeAll(async () => {
  app = await startTestApp({ env: { RATE_LIMIT_REST_PER_HOUR: '100000' } });
  u = await app.createUser('rw');
});
afterAll(() => app?.close());

async function gql(query: string, variables: Record<string, unknown> = {}) {
  const r = await app.request('POST', '/api/v1/graphql', { token: u.token, body: { query, variables } });
  expect(r.status).toBe(200);
  expect(r.body.errors).toBeUndefined();
  return r.body.data;
}

const sessionRow = async (sid: string) =>
  (
    await app.deps.db.prisma.$queryRawUnsafe<{ name: string; userTitle: string | null; metadataJson: string; redactionsJson: string }[]>(
      'SELECT name, userTitle, metadataJson, redactionsJson FROM sessions WHERE id = ?',
      sid,
    )
  )[0];
const projectName = async (id: string) => (await app.deps.db.prisma.$queryRawUnsafe<{ name: string }[]>('SELECT name FROM projects WHERE id = ?', id))[0].name;
const labels = async (sid: string) =>
  (await app.deps.db.prisma.$queryRawUnsafe<{ value: string }[]>('SELECT value FROM session_labels WHERE sessionId = ?', sid)).map((r) => r.value);

const noSecret = (text: string) => {
  expect(text).not.toContain(githubToken);
  expect(text).not.toContain(npmToken);
};

const search = async (q: string) =>
  (await gql(`query($q: String!) { searchSessions(query: $q, limit: 50) { results { sessionId name snippet metadata { tags } } } }`, { q })).searchSessions
    .results as any[];

/** Waits until the index holds the session's patched (masked) name, then checks the secrets are not found. */
async function notSearchable(sid: string) {
  await eventually(
    'the index to hold the patched session',
    async () => {
      if ((await (app.deps.search as unknown as Search).backlog()) !== 0) return false;
      const hit = (await search(MARKER)).find((r) => r.sessionId === sid);
      return !!hit && String(hit.name).includes('[REDACTED');
    },
    60_000,
  );
  for (const secret of [githubToken, npmToken]) {
    // No word of a query is a gate, so a part of the token (its prefix) may still find the session:
    // the token itself, asked for exactly, must not, and no answer may carry it.
    const exact = await search(`"${secret}"`);
    expect(exact.map((h) => h.sessionId)).not.toContain(sid);
    noSecret(JSON.stringify(exact));
    noSecret(JSON.stringify(await search(secret)));
  }
}

async function upload(projectId: string) {
  const sid = crypto.randomUUID();
  const r = await app.request('PUT', `/api/v1/projects/${projectId}/sessions/${sid}`, {
    token: u.token,
    body: { name: 'clean', markdown: `# clean\n\n${MARKER}\n` },
  });
  expect(r.status).toBe(201);
  return sid;
}

const patch = { name: `Deploy with ${githubToken}`, userTitle: `Title ${npmToken}`, tags: ['deploy', npmToken, `also ${githubToken}`] };

test('REST PATCH of a session: name, userTitle and tags are masked, counted and not searchable', async () => {
  const sid = await upload('rw-rest');
  const r = await app.request('PATCH', `/api/v1/projects/rw-rest/sessions/${sid}`, { token: u.token, body: patch });
  expect(r.status).toBe(200);
  noSecret(r.text);
  const row = await sessionRow(sid);
  noSecret(JSON.stringify(row));
  expect(row.name).toMatch(/^Deploy with \[REDACTED:[a-z0-9-]+\]\**$/);
  expect(Buffer.byteLength(row.name)).toBe(Buffer.byteLength(patch.name)); // same byte length
  expect(row.userTitle).toContain('[REDACTED');
  expect(JSON.parse(row.metadataJson).tags).toEqual(['deploy', expect.stringMatching(/^\[REDACTED/), expect.stringMatching(/^also \[REDACTED/)]);
  noSecret((await labels(sid)).join('\n'));
  const got = await app.request('GET', `/api/v1/projects/rw-rest/sessions/${sid}`, { token: u.token });
  noSecret(got.text);
  expect(got.body.data.session.redactions.reduce((n: number, x: { count: number }) => n + x.count, 0)).toBe(4);
  await notSearchable(sid);
});

test('GraphQL updateSession: the same', async () => {
  const sid = await upload('rw-gql');
  const data = await gql(
    `mutation($p: ID!, $id: ID!, $in: UpdateSessionInput!) { updateSession(projectId: $p, id: $id, input: $in) { name userTitle metadata { tags } redactions { rule count } } }`,
    { p: 'rw-gql', id: sid, in: patch },
  );
  noSecret(JSON.stringify(data));
  expect(data.updateSession.redactions.length).toBeGreaterThan(0);
  const row = await sessionRow(sid);
  noSecret(JSON.stringify(row));
  expect(row.userTitle).toContain('[REDACTED');
  await notSearchable(sid);
});

test('project names: REST create and PATCH, GraphQL createProject and updateProject', async () => {
  const name = `Prod ${githubToken}`;
  expect((await app.request('POST', '/api/v1/projects', { token: u.token, body: { id: 'rw-p1', name } })).status).toBe(201);
  expect(await projectName('rw-p1')).toMatch(/^Prod \[REDACTED/);
  expect((await app.request('POST', '/api/v1/projects', { token: u.token, body: { id: 'rw-p2', name: 'clean' } })).status).toBe(201);
  const patched = await app.request('PATCH', '/api/v1/projects/rw-p2', { token: u.token, body: { name: `Other ${npmToken}` } });
  expect(patched.status).toBe(200);
  noSecret(patched.text);
  expect(await projectName('rw-p2')).toMatch(/^Other \[REDACTED/);

  const created = await gql(`mutation($in: CreateProjectInput!) { createProject(input: $in) { id name } }`, { in: { id: 'rw-p3', name } });
  noSecret(JSON.stringify(created));
  expect(await projectName('rw-p3')).toMatch(/^Prod \[REDACTED/);
  const updated = await gql(`mutation($id: ID!, $in: UpdateProjectInput!) { updateProject(id: $id, input: $in) { name } }`, {
    id: 'rw-p3',
    in: { name: `Again ${npmToken}` },
  });
  noSecret(JSON.stringify(updated));
  expect(await projectName('rw-p3')).toMatch(/^Again \[REDACTED/);
});

test('GraphQL createApiKey: the key name is masked', async () => {
  const data = await gql(`mutation($n: String!) { createApiKey(name: $n) { key { id name } } }`, { n: `ci ${githubToken}` });
  expect(data.createApiKey.key.name).toMatch(/^ci \[REDACTED/);
  const rows = await app.deps.db.prisma.$queryRawUnsafe<{ name: string }[]>('SELECT name FROM api_keys WHERE id = ?', data.createApiKey.key.id);
  noSecret(rows[0].name);
});
