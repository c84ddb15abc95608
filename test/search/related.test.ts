/**
 * Related sessions over REST, GraphQL and MCP, on the real engine and database.
 *
 * The archive holds sessions on a few subjects (connection pools, CSS layout, Helm charts), spread
 * over a team project and personal projects. The sessions related to a pool session are the other
 * pool sessions the caller may read, most alike first, itself left out; a team's admin, member and
 * viewer, a read-only key, an outsider and another user each get exactly their readable share,
 * and a session they cannot read answers as every read of it does (403 for another account's
 * project, 404 for one that does not exist; MCP: not found).
 */
import crypto from 'node:crypto';
import { distinctiveTerms, termCandidates } from '../../src/domain/distinctive-terms';
import { startTestApp, type TestApp, type TestUser } from '../support/app';
import { eventually } from '../support/eventually';
import { connectMcp } from '../support/mcp-client';

const exchange = (q: string, a: string) => `_**User**_\n\n${q}\n\n---\n\n_**Agent (claude-sonnet)**_\n\n${a}\n\n---\n\n`;

const POOL = [
  'The pgbouncer connection pool is exhausted under load; postgres rejects clients with too many connections.',
  'Raise max_client_conn in pgbouncer and lower the pool size per database; postgres max_connections stays at 100.',
];
const POOL_2 = [
  'Our postgres pool runs out of connections: pgbouncer logs "no more connections allowed".',
  'Switch pgbouncer to transaction pooling so the postgres connections are shared between clients.',
];
const POOL_3 = ['Why does pgbouncer keep idle postgres connections open?', 'Set server_idle_timeout in pgbouncer; the postgres pool then shrinks when idle.'];
const CSS = ['The flexbox sidebar collapses on narrow screens.', 'Give the sidebar flex-shrink 0 and a min-width; the flexbox layout then keeps it.'];
const HELM = ['The helm chart fails to render the ingress template.', 'The values file misses ingress.hosts; helm template then renders the chart.'];

interface Fixture {
  projectId: string;
  sessionId: string;
  title: string;
  turns: string[];
}
const sid = () => crypto.randomUUID();
const T = 'related-team';
const F = {
  pool: { projectId: T, sessionId: sid(), title: 'Pool exhausted', turns: POOL },
  pool2: { projectId: T, sessionId: sid(), title: 'Pool runs out', turns: POOL_2 },
  css: { projectId: T, sessionId: sid(), title: 'Sidebar layout', turns: CSS },
  helm: { projectId: T, sessionId: sid(), title: 'Chart ingress', turns: HELM },
  adaPool: { projectId: 'related-ada', sessionId: sid(), title: 'Idle connections', turns: POOL_3 },
  adaCss: { projectId: 'related-ada', sessionId: sid(), title: 'Flexbox again', turns: CSS },
  evePool: { projectId: 'related-eve', sessionId: sid(), title: 'Eve pool notes', turns: POOL_2 },
  umaHelm: { projectId: 'related-uma', sessionId: sid(), title: 'Uma chart notes', turns: HELM },
} satisfies Record<string, Fixture>;
const ALL: Fixture[] = Object.values(F);
const key = (f: { projectId: string; sessionId: string }) => `${f.projectId}/${f.sessionId}`;

let app: TestApp;
let ada: TestUser; // team admin, with a personal project
let bob: TestUser; // team member
let val: TestUser; // team viewer
let eve: TestUser; // outsider with a personal project
let uma: TestUser; // another user with a personal project
let roKey: string; // a read-only key of the viewer

const rest = (token: string, method: string, path: string, body?: unknown) => app.request(method, path, { token, body });
const relatedUrl = (f: Fixture, limit?: string | number) =>
  `/api/v1/projects/${f.projectId}/sessions/${f.sessionId}/related${limit === undefined ? '' : `?limit=${encodeURIComponent(String(limit))}`}`;

async function upload(u: TestUser, f: Fixture) {
  const [q1, a1] = f.turns;
  // Exchange 1 is the heading with a greeting every session has, 2 the subject.
  const markdown = `# Session notes\n\n${exchange('Hello, a question about our setup.', 'Sure, go ahead.')}${exchange(q1, a1)}`;
  const r = await rest(u.token, 'PUT', `/api/v1/projects/${f.projectId}/sessions/${f.sessionId}`, { name: f.title, markdown });
  expect([key(f), r.status]).toEqual([key(f), 201]);
}

beforeAll(async () => {
  app = await startTestApp({ rateLimit: false });
  [ada, bob, val, eve, uma] = await Promise.all(['ada', 'bob', 'val', 'eve', 'uma'].map((n) => app.createUser(n)));
  const team = await rest(ada.token, 'POST', '/api/v1/teams', { name: 'Related' });
  const teamId = team.body.data.team.id;
  for (const [u, role] of [
    [bob, 'member'],
    [val, 'viewer'],
  ] as const) {
    expect((await rest(ada.token, 'POST', `/api/v1/teams/${teamId}/members`, { email: u.email, role })).status).toBe(201);
  }
  expect((await rest(ada.token, 'POST', '/api/v1/projects', { id: T, name: 'Related team', teamId })).status).toBe(201);
  for (const f of [F.pool, F.css, F.helm, F.adaPool, F.adaCss]) await upload(ada, f);
  await upload(bob, F.pool2);
  await upload(eve, F.evePool);
  await upload(uma, F.umaHelm);
  const k = await rest(val.token, 'POST', '/api/v1/keys', { name: 'agent', scopes: ['read'] });
  roKey = k.body.data.token;
  // Everything indexed: each owner's search finds all of their sessions.
  await eventually(
    'every session to be searchable',
    async () => {
      const counts = await Promise.all(
        [ada, eve, uma].map(async (u) => (await app.gql(u, '{ searchSessions(query: "question setup") { total } }')).body?.data?.searchSessions?.total),
      );
      return counts.join() === '6,1,1';
    },
    60_000,
  );
}, 180_000);
afterAll(() => app?.close());

interface Caller {
  name: string;
  token: () => string;
  reads: Fixture[];
}
const CALLERS: Caller[] = [
  { name: 'team admin', token: () => ada.token, reads: [F.pool, F.pool2, F.css, F.helm, F.adaPool, F.adaCss] },
  { name: 'team member', token: () => bob.token, reads: [F.pool, F.pool2, F.css, F.helm] },
  { name: 'team viewer', token: () => val.token, reads: [F.pool, F.pool2, F.css, F.helm] },
  { name: 'read-only key', token: () => roKey, reads: [F.pool, F.pool2, F.css, F.helm] },
  { name: 'outsider', token: () => eve.token, reads: [F.evePool] },
  { name: 'another user', token: () => uma.token, reads: [F.umaHelm] },
];

describe.each(CALLERS)('$name', ({ token, reads }) => {
  const readable = new Set(reads.map(key));

  test('REST: for every session there is, only readable sessions, never itself; an unreadable one → 403, an unknown one → 404', async () => {
    for (const f of ALL) {
      const r = await rest(token(), 'GET', relatedUrl(f, 20));
      if (!readable.has(key(f))) {
        expect([key(f), r.status, r.body]).toEqual([key(f), 403, { success: false, error: 'Insufficient permissions' }]);
        expect(r.text).not.toContain(f.title);
        continue;
      }
      expect([key(f), r.status]).toEqual([key(f), 200]);
      const got: string[] = r.body.data.sessions.map(key);
      expect(got).not.toContain(key(f));
      for (const g of got) expect([key(f), g, readable.has(g)]).toEqual([key(f), g, true]);
    }
    const ghost = await rest(token(), 'GET', `/api/v1/projects/${T}/sessions/${sid()}/related`);
    // The team's project exists: an unknown session in it is 404 for a reader, 403 for anyone else.
    expect(ghost.status).toBe(readable.has(key(F.pool)) ? 404 : 403);
    expect((await rest(token(), 'GET', `/api/v1/projects/related-nobody/sessions/${sid()}/related`)).status).toBe(404);
  });

  test('GraphQL Session.related: an unreadable session answers as reading it does (FORBIDDEN, nothing of it), an unknown one NOT_FOUND', async () => {
    const q = `query($p: ID!, $s: ID!) { session(projectId: $p, id: $s) { id related(limit: 20) { projectId sessionId title } } }`;
    for (const f of ALL) {
      const g = await app.gql(token(), q, { p: f.projectId, s: f.sessionId });
      if (readable.has(key(f))) {
        expect([key(f), g.body.errors]).toEqual([key(f), undefined]);
        const got: string[] = g.body.data.session.related.map(key);
        for (const r of got) expect([key(f), r, readable.has(r)]).toEqual([key(f), r, true]);
        continue;
      }
      expect([key(f), g.body.errors?.[0]?.extensions?.code, g.body.data?.session ?? null]).toEqual([key(f), 'FORBIDDEN', null]);
      expect(JSON.stringify(g.body)).not.toContain(f.title);
    }
    const nobody = await app.gql(token(), q, { p: 'related-nobody', s: sid() });
    expect(nobody.body.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
  });

  test('MCP related_sessions: the same sessions as REST; an unreadable session reads as not found', async () => {
    const mcp = await connectMcp(app.url, token());
    try {
      for (const f of ALL) {
        const r = await mcp.call('related_sessions', { projectId: f.projectId, sessionId: f.sessionId, limit: 20 });
        if (!readable.has(key(f))) {
          expect([key(f), r.isError]).toEqual([key(f), true]);
          expect(r.content).toEqual([{ type: 'text', text: `Project ${f.projectId} not found (list_projects shows the projects you can read)` }]);
          continue;
        }
        expect([key(f), r.isError ?? false]).toEqual([key(f), false]);
        const viaRest = (await rest(token(), 'GET', relatedUrl(f, 20))).body.data.sessions.map(key);
        expect([key(f), r.structuredContent.sessions.map(key)]).toEqual([key(f), viaRest]);
      }
    } finally {
      await mcp.close();
    }
  });
});

describe('what is related', () => {
  test('the other pool sessions come first, most alike first; subjects the session does not share come after them or not at all', async () => {
    const r = await rest(ada.token, 'GET', relatedUrl(F.pool));
    expect(r.status).toBe(200);
    const got: Array<{ projectId: string; sessionId: string; score: number }> = r.body.data.sessions;
    expect(got.slice(0, 2).map(key).sort()).toEqual([key(F.pool2), key(F.adaPool)].sort());
    const scores = got.map((s) => s.score);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
    for (const s of scores) expect(s > 0 && s <= 1).toBe(true);
    // The default is 5; the limit holds.
    expect(got.length).toBeLessThanOrEqual(5);
    const one = await rest(ada.token, 'GET', relatedUrl(F.pool, 1));
    expect(one.body.data.sessions.map(key)).toEqual([key(got[0])]);
  });

  test('each names the exchange most like the session: its number, title and a marked, escaped snippet; the title is the display title', async () => {
    // A user title wins over the name.
    expect(
      (await rest(bob.token, 'PATCH', `/api/v1/projects/${T}/sessions/${F.pool2.sessionId}`, { userTitle: 'Pool <b>out</b> of connections' })).status,
    ).toBe(200);
    await eventually('the retitled session to be related again', async () => {
      const r = await rest(ada.token, 'GET', relatedUrl(F.pool));
      return r.body.data.sessions.some((s: { sessionId: string }) => s.sessionId === F.pool2.sessionId);
    });
    const r = await rest(ada.token, 'GET', relatedUrl(F.pool));
    const twin = r.body.data.sessions.find((s: { sessionId: string }) => s.sessionId === F.pool2.sessionId);
    expect(twin.title).toBe('Pool <b>out</b> of connections');
    expect(twin.exchange.number).toBe(2);
    expect(twin.exchange.title).toBe(POOL_2[0]);
    expect(twin.exchange.snippet).toMatch(/<mark>(pgbouncer|postgres|connections|pool)<\/mark>/i);
    expect(twin.exchange.snippet).toContain('&quot;no more <mark>connections</mark> allowed&quot;');
    expect(twin.exchange.snippet.replace(/<\/?mark>/g, '')).not.toMatch(/[<>]/);
  });

  test('GraphQL Session.related: the same list as REST, each with its session; MCP gives plain snippets and links', async () => {
    const q = `query($p: ID!, $s: ID!) { session(projectId: $p, id: $s) { related(limit: 3) { projectId sessionId title score exchange { number title snippet } session { id name } } } }`;
    const g = await app.gql(ada, q, { p: F.pool.projectId, s: F.pool.sessionId });
    expect(g.body.errors).toBeUndefined();
    const related = g.body.data.session.related;
    const viaRest = (await rest(ada.token, 'GET', relatedUrl(F.pool, 3))).body.data.sessions;
    expect(related.map(({ session, ...r }: { session: { id: string } }) => ({ ...r, sid: session.id }))).toEqual(
      viaRest.map((r: { sessionId: string }) => ({ ...r, sid: r.sessionId })),
    );
    const mcp = await connectMcp(app.url, ada.token);
    try {
      const r = await mcp.call('related_sessions', { projectId: F.pool.projectId, sessionId: F.pool.sessionId, limit: 3 });
      const first = r.structuredContent.sessions[0];
      expect(first.url).toBe(`${app.url}/projects/${first.projectId}/sessions/${first.sessionId}#exchange-${first.exchange.number}`);
      expect(first.exchange.snippet).toMatch(/«[^»]+»/);
      expect(first.exchange.snippet).not.toContain('<mark>');
      expect((r.content as Array<{ text: string }>)[0].text).toContain(first.sessionId);
    } finally {
      await mcp.close();
    }
  });

  test('a session with nothing in common with the others: an empty list, not an error', async () => {
    const f = { projectId: 'related-ada', sessionId: sid(), title: 'Zyxwv', turns: ['qwertzuiop asdfghjkl', 'yxcvbnm poiuztrewq'] };
    await upload(ada, f);
    const r = await rest(ada.token, 'GET', relatedUrl(f));
    expect(r.status).toBe(200);
    expect(r.body.data.sessions.map(key)).not.toContain(key(f));
    expect((await rest(ada.token, 'DELETE', `/api/v1/projects/${f.projectId}/sessions/${f.sessionId}`)).status).toBe(200);
  });

  test('a deleted session is never related, even before the index catches up', async () => {
    const gone = { ...F.pool2, projectId: 'related-ada', sessionId: sid(), title: 'Pool copy' };
    await upload(ada, gone);
    await eventually('the copy to be related', async () =>
      (await rest(ada.token, 'GET', relatedUrl(F.pool, 20))).body.data.sessions.some((s: Fixture) => s.sessionId === gone.sessionId),
    );
    expect((await rest(ada.token, 'DELETE', `/api/v1/projects/${gone.projectId}/sessions/${gone.sessionId}`)).status).toBe(200);
    const r = await rest(ada.token, 'GET', relatedUrl(F.pool, 20));
    expect(r.body.data.sessions.map(key)).not.toContain(key(gone));
  });
});

describe('limit', () => {
  test.each(['0', '21', '-1', '2.5', 'abc', ''])('REST limit=%p → 400', async (limit) => {
    const r = await rest(ada.token, 'GET', relatedUrl(F.pool, limit));
    expect([r.status, r.body]).toEqual([400, { success: false, error: 'Invalid value for limit: must be an integer between 1 and 20' }]);
  });

  test('GraphQL limit outside 1-20 → VALIDATION_ERROR; MCP → a tool error naming the range', async () => {
    for (const limit of [0, 21]) {
      const g = await app.gql(ada, `query($p: ID!, $s: ID!, $l: Int) { session(projectId: $p, id: $s) { related(limit: $l) { sessionId } } }`, {
        p: F.pool.projectId,
        s: F.pool.sessionId,
        l: limit,
      });
      expect([limit, g.body.errors?.[0]?.extensions?.code]).toEqual([limit, 'VALIDATION_ERROR']);
    }
    const mcp = await connectMcp(app.url, ada.token);
    try {
      const r = await mcp.call('related_sessions', { projectId: F.pool.projectId, sessionId: F.pool.sessionId, limit: 21 });
      expect(r.isError).toBe(true);
      expect(JSON.stringify(r.content)).toContain('limit must be an integer from 1 to 20');
    } finally {
      await mcp.close();
    }
  });
});

describe('distinctive terms', () => {
  test('words every document holds, and words no other document holds, are not searched for; rare shared words come first', () => {
    const c = termCandidates('Pool exhausted', 'the pgbouncer pool pool pool postgres banana', 10);
    expect(c[0]).toEqual({ term: 'pool', tf: 6 });
    const counts = { documents: 100, counts: c.map((x) => ({ pool: 100, pgbouncer: 3, postgres: 20, banana: 1, exhausted: 5 })[x.term] ?? 0) };
    // exhausted is rarer than postgres and a title word (counted 3 times): first.
    expect(distinctiveTerms(c, counts, 10)).toEqual(['exhausted', 'pgbouncer', 'postgres']);
    // Without counts: the most frequent words.
    expect(distinctiveTerms(c, null, 2)).toEqual(['pool', 'exhausted']);
  });
});
