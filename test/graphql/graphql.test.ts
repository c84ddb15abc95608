import * as statsService from '../../src/services/stats';
import { startTestApp, type TestApp, type TestUser } from '../support/app';

/**
 * GraphQL API against a real app and a fresh MariaDB database. Data is
 * created through REST; createdAt/updatedAt are then moved back in time with one UPDATE per
 * session (no API can backdate a session), so that time filters, orders and per-day stats have
 * something to tell apart.
 */

let app: TestApp;
let a: TestUser;
let b: TestUser;

const DAY = 86_400_000;
const NOW = Date.now();
const S1 = '11111111-1111-4111-8111-111111111111';
const S2 = '22222222-2222-4222-8222-222222222222';
const S3 = '33333333-3333-4333-8333-333333333333';
const S4 = '44444444-4444-4444-8444-444444444444';
const SB = '55555555-5555-4555-8555-555555555555';

const created: Record<string, Date> = {
  [S1]: new Date(NOW - 1 * 3600_000),
  [S2]: new Date(NOW - 2 * DAY),
  [S3]: new Date(NOW - 10 * DAY),
  [S4]: new Date(NOW - 40 * DAY),
};
const updated: Record<string, Date> = {
  [S1]: new Date(NOW - 3 * 3600_000),
  [S2]: new Date(NOW - 1 * 3600_000),
  [S3]: new Date(NOW - 2 * 3600_000),
  [S4]: new Date(NOW - 4 * 3600_000),
};
const markdown: Record<string, string> = {
  [S1]: '# Alpha one\nsome text',
  [S2]: '# Beta two — ünïcode',
  [S3]: '# Charlie\n' + 'x'.repeat(300),
  [S4]: '# delta',
};

const ids = (list: Array<{ id: string }>) => list.map((s) => s.id);

beforeAll(async () => {
  // Many operations per user here; the budget itself is tested in graphql-rate-limit.test.ts.
  app = await startTestApp({ env: { RATE_LIMIT_GRAPHQL_PER_HOUR: '100000', RATE_LIMIT_REST_PER_HOUR: '100000' } });
  a = await app.createUser('alice');
  b = await app.createUser('bob');
  const p = await app.request('POST', '/api/v1/projects', { token: a.token, body: { id: 'alpha', name: 'Alpha', icon: 'Rocket', color: 'rose' } });
  expect(p.status).toBe(201);
  await app.upload(a, 'alpha', S1, {
    name: 'Alpha one',
    markdown: markdown[S1],
    rawData: 'raw-1',
    startedAt: '2024-01-01T00:00:00.000Z',
    metadata: {
      clientName: 'Claude-Code',
      agentName: 'claude',
      deviceId: 'dev-1',
      llmModels: ['gpt-4', 'claude-3'],
      tags: ['bug', 'ui'],
      gitBranches: ['main'],
      machineName: 'mbp',
      title: 'The title',
      summary: 'The summary',
    },
  });
  await app.upload(a, 'alpha', S2, {
    name: 'Beta two',
    markdown: markdown[S2],
    startedAt: '2024-02-01T00:00:00.000Z',
    metadata: { clientName: 'cursor', agentName: 'agentX', deviceId: 'dev-2', llmModels: ['claude-3'], tags: ['feature'] },
  });
  await app.upload(a, 'beta', S3, {
    name: 'Charlie',
    projectName: 'Beta project',
    markdown: markdown[S3],
    startedAt: '2023-12-01T00:00:00.000Z',
    metadata: { llmModels: ['gpt-4'], tags: ['bug'], gitBranches: ['dev', 'main'], deviceId: 'DEV-1' },
  });
  await app.upload(a, 'beta', S4, { name: 'delta', markdown: markdown[S4], startedAt: '2024-03-01T00:00:00.000Z' });
  await app.upload(b, 'gamma', SB, { name: 'Bob session', markdown: '# bob', metadata: { llmModels: ['gpt-4'] } });
  for (const id of [S1, S2, S3, S4]) {
    await app.deps.db.prisma.$executeRawUnsafe('UPDATE sessions SET createdAt = ?, updatedAt = ? WHERE id = ?', created[id], updated[id], id);
  }
});
afterAll(() => app?.close());

// ---------------------------------------------------------------------------------------------

describe('root queries', () => {
  test('projects lists the caller’s projects, most recent activity first, with aggregates', async () => {
    const r = await app.gql(a.token, '{ projects { id ownerId name icon color createdAt updatedAt sessionCount totalMarkdownSize lastActivity } }');
    expect(r.status).toBe(200);
    expect(r.body.errors).toBeUndefined();
    const list = r.body.data.projects;
    // alpha's latest update is S2 (1 h ago), beta's S3 (2 h ago).
    expect(ids(list)).toEqual(['alpha', 'beta']);
    expect(list[0]).toMatchObject({ ownerId: a.id, name: 'Alpha', icon: 'Rocket', color: 'rose', sessionCount: 2 });
    expect(list[0].totalMarkdownSize).toBe(Buffer.byteLength(markdown[S1]) + Buffer.byteLength(markdown[S2]));
    expect(list[0].lastActivity).toBe(updated[S2].toISOString());
    expect(list[1]).toMatchObject({ name: 'Beta project', icon: 'Code2', color: 'blue', sessionCount: 2 });
  });

  test('project(id) returns one project; REST and GraphQL agree', async () => {
    const r = await app.gql(a.token, '{ project(id: "beta") { id name sessionCount totalMarkdownSize lastActivity createdAt retentionDays legalHold } }');
    const rest = await app.request('GET', '/api/v1/projects/beta', { token: a.token });
    const { ownerId: _o, owner: _ow, icon: _i, color: _c, updatedAt: _u, lastUpdated: _l, ...restProject } = rest.body.data.project;
    expect(r.body.data.project).toEqual(restProject);
  });

  test('session(id, projectId) returns every Session field', async () => {
    const r = await app.gql(
      a.token,
      `query($id: ID!, $p: ID) { session(id: $id, projectId: $p) {
        id projectId name userTitle markdownSize rawDataSize createdAt updatedAt startedAt endedAt etag markdownContent
        metadata { clientName clientVersion agentName deviceId gitBranches llmModels tags machineName title summary }
        project { id name } } }`,
      { id: S1.toUpperCase(), p: 'alpha' },
    );
    expect(r.body.errors).toBeUndefined();
    const s = r.body.data.session;
    const rest = await app.request('GET', `/api/v1/projects/alpha/sessions/${S1}`, { token: a.token });
    expect(s).toMatchObject({
      id: S1,
      projectId: 'alpha',
      name: 'Alpha one',
      userTitle: null,
      markdownSize: Buffer.byteLength(markdown[S1]),
      rawDataSize: 5,
      createdAt: created[S1].toISOString(),
      startedAt: '2024-01-01T00:00:00.000Z',
      etag: rest.headers.etag,
      markdownContent: markdown[S1],
      project: { id: 'alpha', name: 'Alpha' },
    });
    expect(s.metadata).toEqual({
      clientName: 'Claude-Code',
      clientVersion: null,
      agentName: 'claude',
      deviceId: 'dev-1',
      gitBranches: ['main'],
      llmModels: ['gpt-4', 'claude-3'],
      tags: ['bug', 'ui'],
      machineName: 'mbp',
      title: 'The title',
      summary: 'The summary',
    });
  });

  test('session(id) without projectId finds the caller’s most recently updated one', async () => {
    const shared = '66666666-6666-4666-8666-666666666666';
    await app.upload(a, 'alpha', shared, { name: 'in alpha', markdown: 'a' });
    await app.upload(a, 'beta', shared, { name: 'in beta', markdown: 'b' });
    await app.deps.db.prisma.$executeRawUnsafe("UPDATE sessions SET updatedAt = ? WHERE id = ? AND projectId = 'alpha'", new Date(NOW + DAY), shared);
    const r = await app.gql(a.token, `{ session(id: "${shared}") { projectId name } }`);
    expect(r.body.data.session).toEqual({ projectId: 'alpha', name: 'in alpha' });
    await app.request('DELETE', `/api/v1/projects/alpha/sessions/${shared}`, { token: a.token });
    const r2 = await app.gql(a.token, `{ session(id: "${shared}") { projectId name } }`);
    expect(r2.body.data.session).toEqual({ projectId: 'beta', name: 'in beta' });
    await app.request('DELETE', `/api/v1/projects/beta/sessions/${shared}`, { token: a.token });
    // Bob's session is never found by Alice.
    const r3 = await app.gql(a.token, `{ session(id: "${SB}") { id } }`);
    expect(r3.status).toBe(200);
    expect(r3.body.data.session).toBeNull();
    expect(r3.body.errors[0].extensions).toMatchObject({ code: 'NOT_FOUND', sessionId: SB });
  });

  test('apiKeys lists the caller’s keys without tokens', async () => {
    const r = await app.gql(a.token, '{ apiKeys { id userId name createdAt lastUsedAt expiresAt revokedAt } }');
    expect(r.body.data.apiKeys.map((k: any) => k.id)).toContain(a.keyId);
    expect(r.body.data.apiKeys.every((k: any) => k.userId === a.id)).toBe(true);
    expect(JSON.stringify(r.body)).not.toContain(a.token);
  });

  test('introspection is on and describes every type', async () => {
    const r = await app.gql(a.token, '{ __schema { queryType { fields { name description } } types { name description } } }');
    expect(r.status).toBe(200);
    const fields = r.body.data.__schema.queryType.fields.map((f: any) => f.name);
    expect(fields).toEqual(
      expect.arrayContaining(['projects', 'project', 'session', 'sessions', 'sessionsConnection', 'searchSessions', 'stats', 'analytics', 'apiKeys']),
    );
    const own = r.body.data.__schema.types.filter((t: any) => !t.name.startsWith('__') && !['String', 'Int', 'Float', 'Boolean', 'ID'].includes(t.name));
    expect(own.filter((t: any) => !t.description)).toEqual([]);
  });

  test('searchSessions shapes the engine’s hits and drops what is not the caller’s (stubbed engine)', async () => {
    const search = app.deps.search;
    const original = search.search.bind(search);
    const calls: any[] = [];
    search.search = (...args: any[]) => {
      calls.push(args);
      return Promise.resolve({
        total: 4,
        hits: [
          {
            projectId: 'alpha',
            sessionId: S1,
            rank: 0.5,
            snippet: 'some <mark>text</mark>',
            matchingExchanges: [
              { id: `${S1}:0`, content: 'some <b>texts</b> & more', orderNumber: 0 },
              { id: `${S1}:1`, content: 'other text', orderNumber: 1 },
            ],
          },
          { projectId: 'beta', sessionId: S3, rank: 0.9, snippet: '<mark>Charlie</mark>', matchingExchanges: [] },
          { projectId: 'gamma', sessionId: SB, rank: 1, snippet: 'bob', matchingExchanges: [] },
          { projectId: 'alpha', sessionId: '99999999-9999-4999-8999-999999999999', rank: 0.7, snippet: 'gone', matchingExchanges: [] },
        ],
      });
    };
    try {
      const r = await app.gql(
        a.token,
        `{ searchSessions(query: "text", limit: 5) { total results {
            id sessionId clientId projectId name userTitle rank snippet createdAt updatedAt startedAt endedAt markdownSize markdownContent
            metadata { machineName title summary llmModels } matchingExchanges(limit: 1) { id content orderNumber snippet }
            project { id name } session { id etag } } } }`,
      );
      expect(r.body.errors).toBeUndefined();
      const { total, results } = r.body.data.searchSessions;
      expect(total).toBe(4);
      expect(results.map((x: any) => x.id)).toEqual([S3, S1]);
      const one = results[1];
      expect(one).toMatchObject({
        id: S1,
        sessionId: S1,
        clientId: S1,
        projectId: 'alpha',
        name: 'Alpha one',
        userTitle: null,
        rank: 0.5,
        snippet: 'some <mark>text</mark>',
        createdAt: created[S1].toISOString(),
        markdownSize: Buffer.byteLength(markdown[S1]),
        markdownContent: markdown[S1],
        metadata: { machineName: 'mbp', title: 'The title', summary: 'The summary', llmModels: ['gpt-4', 'claude-3'] },
        // `limit: 1`: the first of the two; its snippet escaped, the query's word marked in the form the fragment holds.
        matchingExchanges: [
          { id: `${S1}:0`, content: 'some <b>texts</b> & more', orderNumber: 0, snippet: 'some &lt;b&gt;<mark>texts</mark>&lt;/b&gt; &amp; more' },
        ],
        project: { id: 'alpha', name: 'Alpha' },
        session: { id: S1 },
      });
      // The engine is asked for the caller's scopes: their own id (and their teams', none here).
      expect(calls[0][0]).toEqual({
        scopes: [a.id],
        query: 'text',
        filters: {},
        limit: 5,
        offset: 0,
        matchingExchanges: true,
        countTotal: true,
        onRanked: expect.any(Function),
      });
      // Neither matching exchanges nor the total asked: the engine counts no total either.
      await app.gql(a.token, '{ searchSessions(query: "text") { results { id } } }');
      expect(calls[1][0]).toMatchObject({ matchingExchanges: false, countTotal: false });
      // `total` through a fragment counts.
      await app.gql(a.token, '{ searchSessions(query: "text") { ...T results { id } } } fragment T on SearchSessionsResult { total }');
      expect(calls[2][0]).toMatchObject({ matchingExchanges: false, countTotal: true });
      // Left out by `@include(if: false)` or `@skip(if: true)` (the console's later pages): not counted.
      const withTotal = 'query($t: Boolean!) { searchSessions(query: "text") { total @include(if: $t) results { id } } }';
      const r1 = await app.gql(a.token, withTotal, { t: false });
      expect(r1.body.data.searchSessions).toEqual({ results: [{ id: S3 }, { id: S1 }] });
      expect(calls[3][0]).toMatchObject({ countTotal: false });
      await app.gql(a.token, withTotal, { t: true });
      expect(calls[4][0]).toMatchObject({ countTotal: true });
      await app.gql(
        a.token,
        'query($s: Boolean!) { searchSessions(query: "text") { ...T @skip(if: $s) results { id } } } fragment T on SearchSessionsResult { total }',
        { s: true },
      );
      expect(calls[5][0]).toMatchObject({ countTotal: false });
      await app.gql(a.token, '{ searchSessions(query: "text") { ... @include(if: false) { total } results { matchingExchanges @skip(if: true) { id } } } }');
      expect(calls[6][0]).toMatchObject({ matchingExchanges: false, countTotal: false });
    } finally {
      search.search = original;
    }
  });

  test('searchSessions is in the schema and resolves (blank query → VALIDATION_ERROR)', async () => {
    const r = await app.gql(a.token, '{ searchSessions(query: "   ") { total results { id sessionId clientId rank snippet } } }');
    expect(r.status).toBe(200);
    expect(r.body.errors[0].extensions.code).toBe('VALIDATION_ERROR');
    expect(r.body.errors[0].path).toEqual(['searchSessions']);
  });
});

// ---------------------------------------------------------------------------------------------

describe('the two real-client queries', () => {
  test('GetProjectWithSessions', async () => {
    const r = await app.gql(
      a.token,
      `query GetProjectWithSessions($projectId: ID!) { project(id: $projectId) { id name icon color sessions(limit: 10) { id name createdAt markdownSize metadata { clientName llmModels tags } } } }`,
      { projectId: 'alpha' },
    );
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      data: {
        project: {
          id: 'alpha',
          name: 'Alpha',
          icon: 'Rocket',
          color: 'rose',
          sessions: [
            {
              id: S1,
              name: 'Alpha one',
              createdAt: created[S1].toISOString(),
              markdownSize: Buffer.byteLength(markdown[S1]),
              metadata: { clientName: 'Claude-Code', llmModels: ['gpt-4', 'claude-3'], tags: ['bug', 'ui'] },
            },
            {
              id: S2,
              name: 'Beta two',
              createdAt: created[S2].toISOString(),
              markdownSize: Buffer.byteLength(markdown[S2]),
              metadata: { clientName: 'cursor', llmModels: ['claude-3'], tags: ['feature'] },
            },
          ],
        },
      },
    });
  });

  test('SessionsByModel, with and without projectId', async () => {
    const q = `query SessionsByModel($model: String!, $projectId: ID) { sessions(filters: { llmModels: [$model] projectId: $projectId } orderBy: CREATED_AT_DESC limit: 25) { id name createdAt markdownSize project { name icon } metadata { llmModels clientName gitBranches } } }`;
    const all = await app.gql(a.token, q, { model: 'gpt-4' });
    expect(all.status).toBe(200);
    expect(all.body.data.sessions).toEqual([
      {
        id: S1,
        name: 'Alpha one',
        createdAt: created[S1].toISOString(),
        markdownSize: Buffer.byteLength(markdown[S1]),
        project: { name: 'Alpha', icon: 'Rocket' },
        metadata: { llmModels: ['gpt-4', 'claude-3'], clientName: 'Claude-Code', gitBranches: ['main'] },
      },
      {
        id: S3,
        name: 'Charlie',
        createdAt: created[S3].toISOString(),
        markdownSize: Buffer.byteLength(markdown[S3]),
        project: { name: 'Beta project', icon: 'Code2' },
        metadata: { llmModels: ['gpt-4'], clientName: null, gitBranches: ['dev', 'main'] },
      },
    ]);
    const one = await app.gql(a.token, q, { model: 'gpt-4', projectId: 'beta' });
    expect(ids(one.body.data.sessions)).toEqual([S3]);
  });
});

// ---------------------------------------------------------------------------------------------

describe('filters (each applied in SQL, AND-ed)', () => {
  const minus = (ms: number) => new Date(NOW - ms).toISOString();
  const cases: Array<[string, Record<string, unknown>, string[]]> = [
    ['projectId', { projectId: 'alpha' }, [S1, S2]],
    ['projectIds', { projectIds: ['beta'] }, [S3, S4]],
    ['projectId ∩ projectIds', { projectId: 'alpha', projectIds: ['beta'] }, []],
    ['llmModels', { llmModels: ['gpt-4'] }, [S1, S3]],
    ['tags (any of)', { tags: ['feature', 'ui'] }, [S1, S2]],
    ['gitBranches', { gitBranches: ['dev'] }, [S3]],
    ['clientNames (case-insensitive)', { clientNames: ['CLAUDE-CODE', 'nope'] }, [S1]],
    ['agentNames (case-insensitive)', { agentNames: ['AGENTX'] }, [S2]],
    ['deviceIds (exact)', { deviceIds: ['dev-1'] }, [S1]],
    ['clientName', { clientName: 'Cursor' }, [S2]],
    ['agentName', { agentName: 'CLAUDE' }, [S1]],
    ['dateRange', { dateRange: { start: minus(3 * DAY), end: minus(0) } }, [S1, S2]],
    ['dateRange start only', { dateRange: { start: minus(11 * DAY) } }, [S1, S2, S3]],
    ['dateRange end only', { dateRange: { end: minus(5 * DAY) } }, [S3, S4]],
    ['createdAfter', { createdAfter: 5 }, [S1, S2]],
    ['createdAfter 30', { createdAfter: 30 }, [S1, S2, S3]],
    ['hasGitBranches true', { hasGitBranches: true }, [S1, S3]],
    ['hasGitBranches false', { hasGitBranches: false }, [S2, S4]],
    ['timeFilter last24hours', { timeFilter: 'last24hours' }, [S1]],
    ['timeFilter last7days', { timeFilter: 'last7days' }, [S1, S2]],
    ['timeFilter last30days', { timeFilter: 'last30days' }, [S1, S2, S3]],
    ['timeFilter last90days', { timeFilter: 'last90days' }, [S1, S2, S3, S4]],
    ['empty list = no filter', { tags: [], llmModels: [] }, [S1, S2, S3, S4]],
    ['AND across fields', { llmModels: ['gpt-4'], projectId: 'beta', hasGitBranches: true }, [S3]],
    ['another user’s project matches nothing', { projectId: 'gamma' }, []],
  ];
  test.each(cases)('%s', async (_name, filters, expected) => {
    const r = await app.gql(a.token, 'query($f: SessionFilters) { sessions(filters: $f, orderBy: CREATED_AT_DESC, limit: 50) { id } }', { f: filters });
    expect(r.body.errors).toBeUndefined();
    expect(ids(r.body.data.sessions)).toEqual(expected);
  });

  test.each([
    ['unknown timeFilter', { timeFilter: 'lastYear' }, /timeFilter/],
    ['dateRange start after end', { dateRange: { start: '2024-02-01T00:00:00.000Z', end: '2024-01-01T00:00:00.000Z' } }, /dateRange/],
    ['createdAfter below 1', { createdAfter: 0 }, /createdAfter/],
    ['unreadable date', { dateRange: { start: 'yesterday' } }, /dateRange\.start/],
  ])('%s → VALIDATION_ERROR', async (_name, filters, message) => {
    const r = await app.gql(a.token, 'query($f: SessionFilters) { sessions(filters: $f) { id } }', { f: filters });
    expect(r.body.data).toBeNull();
    expect(r.body.errors[0].extensions.code).toBe('VALIDATION_ERROR');
    expect(r.body.errors[0].message).toMatch(message);
  });

  test('Project.sessions applies filters within the project', async () => {
    const r = await app.gql(a.token, '{ projects { id sessions(filters: { tags: ["bug"] }) { id } } }');
    expect(r.body.data.projects).toEqual([
      { id: 'alpha', sessions: [{ id: S1 }] },
      { id: 'beta', sessions: [{ id: S3 }] },
    ]);
  });
});

describe('orders', () => {
  test.each([
    ['CREATED_AT_DESC', [S1, S2, S3, S4]],
    ['CREATED_AT_ASC', [S4, S3, S2, S1]],
    ['UPDATED_AT_DESC', [S2, S3, S1, S4]],
    ['UPDATED_AT_ASC', [S4, S1, S3, S2]],
    ['STARTED_AT_DESC', [S4, S2, S1, S3]],
    ['STARTED_AT_ASC', [S3, S1, S2, S4]],
    ['NAME_ASC', [S1, S2, S3, S4]],
  ])('%s', async (order, expected) => {
    const r = await app.gql(a.token, `{ sessions(orderBy: ${order}, limit: 10) { id } }`);
    expect(ids(r.body.data.sessions)).toEqual(expected);
    // Paging through the connection one at a time yields the same order.
    const seen: string[] = [];
    let after: string | null = null;
    for (let i = 0; i < 6; i++) {
      const c: any = await app.gql(
        a.token,
        'query($o: SessionOrder, $after: String) { sessionsConnection(orderBy: $o, first: 1, after: $after) { edges { cursor node { id } } pageInfo { hasNextPage endCursor } } }',
        {
          o: order,
          after,
        },
      );
      const conn = c.body.data.sessionsConnection;
      seen.push(...conn.edges.map((e: any) => e.node.id));
      if (!conn.pageInfo.hasNextPage) break;
      after = conn.pageInfo.endCursor;
    }
    expect(seen).toEqual(expected);
  });

  test('sessions limit is applied and defaults to 20', async () => {
    const r = await app.gql(a.token, '{ two: sessions(limit: 2) { id } all: sessions { id } }');
    expect(ids(r.body.data.two)).toEqual([S1, S2]);
    expect(r.body.data.all).toHaveLength(4);
  });
});

describe('connections', () => {
  test('sessionsConnection pages with opaque cursors that survive inserts', async () => {
    const q =
      'query($after: String) { sessionsConnection(first: 2, after: $after) { edges { cursor node { id } } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } } }';
    const p1 = (await app.gql(a.token, q)).body.data.sessionsConnection;
    expect(p1.edges.map((e: any) => e.node.id)).toEqual([S1, S2]);
    expect(p1.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: false, startCursor: p1.edges[0].cursor, endCursor: p1.edges[1].cursor });
    // A new session (newest of all) arrives between two page requests.
    const fresh = '77777777-7777-4777-8777-777777777777';
    await app.upload(a, 'alpha', fresh, { name: 'fresh', markdown: 'new' });
    try {
      const p2 = (await app.gql(a.token, q, { after: p1.pageInfo.endCursor })).body.data.sessionsConnection;
      expect(p2.edges.map((e: any) => e.node.id)).toEqual([S3, S4]);
      expect(p2.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: true });
    } finally {
      await app.request('DELETE', `/api/v1/projects/alpha/sessions/${fresh}`, { token: a.token });
    }
  });

  test('an unreadable cursor → VALIDATION_ERROR', async () => {
    const r = await app.gql(a.token, '{ sessionsConnection(after: "garbage") { edges { cursor } } }');
    expect(r.body.errors[0].extensions.code).toBe('VALIDATION_ERROR');
  });

  test('Project.sessions and Project.sessionsConnection page per project', async () => {
    const r = await app.gql(
      a.token,
      '{ projects { id sessions(limit: 1, orderBy: CREATED_AT_ASC) { id } sessionsConnection(first: 1) { edges { node { id } } pageInfo { hasNextPage endCursor } } } }',
    );
    const [alpha, beta] = r.body.data.projects;
    expect(alpha.sessions).toEqual([{ id: S2 }]);
    expect(beta.sessions).toEqual([{ id: S4 }]);
    expect(alpha.sessionsConnection.edges).toEqual([{ node: { id: S1 } }]);
    expect(beta.sessionsConnection.edges).toEqual([{ node: { id: S3 } }]);
    expect(alpha.sessionsConnection.pageInfo.hasNextPage).toBe(true);
    const next = await app.gql(
      a.token,
      'query($c: String) { project(id: "beta") { sessionsConnection(first: 5, after: $c) { edges { node { id } } pageInfo { hasNextPage hasPreviousPage } } } }',
      {
        c: beta.sessionsConnection.pageInfo.endCursor,
      },
    );
    expect(next.body.data.project.sessionsConnection).toEqual({ edges: [{ node: { id: S4 } }], pageInfo: { hasNextPage: false, hasPreviousPage: true } });
  });
});

// ---------------------------------------------------------------------------------------------

describe('stats and analytics', () => {
  const dayKey = (d: Date) => d.toISOString().slice(0, 10);

  test('stats', async () => {
    const r = await app.gql(
      a.token,
      '{ stats { totalSessions totalProjects sessionsThisWeek totalMarkdownSize topLLMModels { model count } top1: topLLMModels(limit: 1) { model count } } }',
    );
    expect(r.body.data.stats).toEqual({
      totalSessions: 4,
      totalProjects: 2,
      sessionsThisWeek: 2,
      totalMarkdownSize: [S1, S2, S3, S4].reduce((n, id) => n + Buffer.byteLength(markdown[id]), 0),
      topLLMModels: [
        { model: 'claude-3', count: 2 },
        { model: 'gpt-4', count: 2 },
      ],
      top1: [{ model: 'claude-3', count: 2 }],
    });
  });

  test('Project.stats', async () => {
    const r = await app.gql(
      a.token,
      '{ project(id: "alpha") { stats { totalSessions totalMarkdownSize totalRawDataSize uniqueLLMModels uniqueGitBranches sessionsByDay(days: 3) { date count } topTags { tag count } top2: topTags(limit: 2) { tag } } } }',
    );
    const today = new Date(NOW);
    const days = [2, 1, 0].map((k) => dayKey(new Date(Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), today.getUTCDate()) - k * DAY)));
    const expectedByDay = days.map((date) => ({ date, count: [S1, S2].filter((id) => dayKey(created[id]) === date).length }));
    expect(r.body.data.project.stats).toEqual({
      totalSessions: 2,
      totalMarkdownSize: Buffer.byteLength(markdown[S1]) + Buffer.byteLength(markdown[S2]),
      totalRawDataSize: 5,
      uniqueLLMModels: ['claude-3', 'gpt-4'],
      uniqueGitBranches: ['main'],
      sessionsByDay: expectedByDay,
      topTags: [
        { tag: 'bug', count: 1 },
        { tag: 'feature', count: 1 },
        { tag: 'ui', count: 1 },
      ],
      top2: [{ tag: 'bug' }, { tag: 'feature' }],
    });
    expect(expectedByDay.reduce((n, d) => n + d.count, 0)).toBe(2);
  });

  test('Project.stats of a project without sessions', async () => {
    await app.request('POST', '/api/v1/projects', { token: a.token, body: { id: 'empty', name: 'Empty' } });
    try {
      const r = await app.gql(
        a.token,
        '{ project(id: "empty") { stats { totalSessions totalMarkdownSize uniqueLLMModels topTags { tag } sessionsByDay(days: 2) { count } } } }',
      );
      expect(r.body.data.project.stats).toEqual({
        totalSessions: 0,
        totalMarkdownSize: 0,
        uniqueLLMModels: [],
        topTags: [],
        sessionsByDay: [{ count: 0 }, { count: 0 }],
      });
    } finally {
      await app.request('DELETE', '/api/v1/projects/empty', { token: a.token });
    }
  });

  test('analytics over a time range', async () => {
    const start = new Date(NOW - 15 * DAY);
    const end = new Date(NOW);
    const r = await app.gql(
      a.token,
      'query($t: TimeRange!) { analytics(timeRange: $t) { totalSessions totalProjects sessionsByModel { model count totalSize } sessionsByClient { client count averageSize } activityByDay { date sessions projects } } }',
      { t: { start: start.toISOString(), end: end.toISOString() } },
    );
    expect(r.body.errors).toBeUndefined();
    const an = r.body.data.analytics;
    const md = (id: string) => Buffer.byteLength(markdown[id]);
    expect(an.totalSessions).toBe(3);
    expect(an.totalProjects).toBe(2);
    expect(an.sessionsByModel).toEqual([
      { model: 'claude-3', count: 2, totalSize: md(S1) + md(S2) },
      { model: 'gpt-4', count: 2, totalSize: md(S1) + md(S3) },
    ]);
    expect(an.sessionsByClient).toEqual(
      expect.arrayContaining([
        { client: 'Claude-Code', count: 1, averageSize: md(S1) },
        { client: 'cursor', count: 1, averageSize: md(S2) },
        { client: 'unknown', count: 1, averageSize: md(S3) },
      ]),
    );
    expect(an.sessionsByClient).toHaveLength(3);
    expect(an.activityByDay[0].date).toBe(dayKey(start));
    expect(an.activityByDay[an.activityByDay.length - 1].date).toBe(dayKey(end));
    expect(an.activityByDay).toHaveLength(16);
    expect(an.activityByDay.reduce((n: number, d: any) => n + d.sessions, 0)).toBe(3);
    expect(an.activityByDay.find((d: any) => d.date === dayKey(created[S3]))).toEqual({ date: dayKey(created[S3]), sessions: 1, projects: 1 });
  });

  test('analytics with start after end → VALIDATION_ERROR', async () => {
    const r = await app.gql(a.token, '{ analytics(timeRange: { start: "2024-02-01T00:00:00.000Z", end: "2024-01-01T00:00:00.000Z" }) { totalSessions } }');
    expect(r.body.errors[0].extensions.code).toBe('VALIDATION_ERROR');
  });
});

// ---------------------------------------------------------------------------------------------

describe('mutations', () => {
  test('createProject, CONFLICT, FORBIDDEN, validation as in REST', async () => {
    const q = 'mutation($i: CreateProjectInput!) { createProject(input: $i) { id name icon color sessionCount ownerId } }';
    const r = await app.gql(a.token, q, { i: { id: 'made-by-gql', name: 'Made', color: 'emerald' } });
    expect(r.body.data.createProject).toEqual({ id: 'made-by-gql', name: 'Made', icon: 'Code2', color: 'emerald', sessionCount: 0, ownerId: a.id });
    const again = await app.gql(a.token, q, { i: { id: 'made-by-gql', name: 'Made' } });
    expect(again.status).toBe(200);
    expect(again.body.errors[0]).toMatchObject({ path: ['createProject'], extensions: { code: 'CONFLICT', projectId: 'made-by-gql' } });
    const theirs = await app.gql(b.token, q, { i: { id: 'made-by-gql', name: 'Mine' } });
    expect(theirs.body.errors[0].extensions).toEqual({ code: 'FORBIDDEN', projectId: 'made-by-gql' });
    const bad = await app.gql(a.token, q, { i: { name: 'x', color: 'neon' } });
    const rest = await app.request('POST', '/api/v1/projects', { token: a.token, body: { name: 'x', color: 'neon' } });
    expect(bad.body.errors[0].extensions.code).toBe('VALIDATION_ERROR');
    expect(bad.body.errors[0].message).toBe(rest.body.error);
    expect(bad.body.errors[0].message).toMatch(/^Invalid value for color\. Must be one of: rose, pink/);
    const generated = await app.gql(a.token, q, { i: { name: 'No id' } });
    expect(generated.body.data.createProject.id).toMatch(/^[0-9a-f-]{36}$/);
    await app.gql(a.token, 'mutation($id: ID!) { deleteProject(id: $id) { deletedAt } }', { id: generated.body.data.createProject.id });
  });

  test('updateProject and deleteProject', async () => {
    const up = await app.gql(a.token, 'mutation { updateProject(id: "made-by-gql", input: { name: "Renamed", icon: "Bug" }) { id name icon color } }');
    expect(up.body.data.updateProject).toEqual({ id: 'made-by-gql', name: 'Renamed', icon: 'Bug', color: 'emerald' });
    const empty = await app.gql(a.token, 'mutation { updateProject(id: "made-by-gql", input: {}) { id } }');
    expect(empty.body.errors[0].extensions.code).toBe('VALIDATION_ERROR');
    const forbidden = await app.gql(b.token, 'mutation { updateProject(id: "made-by-gql", input: { name: "x" }) { id } }');
    expect(forbidden.body.errors[0].extensions).toMatchObject({ code: 'FORBIDDEN', projectId: 'made-by-gql' });
    const del = await app.gql(a.token, 'mutation { deleteProject(id: "made-by-gql") { project { id name } deletedAt } }');
    expect(del.body.data.deleteProject.project).toEqual({ id: 'made-by-gql', name: 'Renamed' });
    expect(Number.isNaN(Date.parse(del.body.data.deleteProject.deletedAt))).toBe(false);
    const gone = await app.gql(a.token, '{ project(id: "made-by-gql") { id } }');
    expect(gone.body.errors[0].extensions).toMatchObject({ code: 'NOT_FOUND', projectId: 'made-by-gql' });
  });

  test('updateSession and deleteSession', async () => {
    const id = '88888888-8888-4888-8888-888888888888';
    await app.upload(a, 'beta', id, { name: 'to change', markdown: 'm', metadata: { tags: ['old'] } });
    const before = await app.gql(a.token, `{ session(id: "${id}", projectId: "beta") { etag } }`);
    const r = await app.gql(
      a.token,
      `mutation { updateSession(projectId: "beta", id: "${id}", input: { name: "changed", tags: ["new", "x"], userTitle: "Mine" }) { id name userTitle etag metadata { tags } } }`,
    );
    expect(r.body.data.updateSession).toMatchObject({ id, name: 'changed', userTitle: 'Mine', metadata: { tags: ['new', 'x'] } });
    expect(r.body.data.updateSession.etag).not.toBe(before.body.data.session.etag);
    const filtered = await app.gql(a.token, '{ sessions(filters: { tags: ["new"] }) { id } }');
    expect(ids(filtered.body.data.sessions)).toEqual([id]);
    const rest = await app.request('GET', `/api/v1/projects/beta/sessions/${id}`, { token: a.token });
    expect(rest.body.data.session).toMatchObject({ name: 'changed', userTitle: 'Mine', etag: r.body.data.updateSession.etag });
    const cleared = await app.gql(a.token, `mutation { updateSession(projectId: "beta", id: "${id}", input: { userTitle: null }) { userTitle } }`);
    expect(cleared.body.data.updateSession.userTitle).toBeNull();
    const empty = await app.gql(a.token, `mutation { updateSession(projectId: "beta", id: "${id}", input: {}) { id } }`);
    expect(empty.body.errors[0].extensions.code).toBe('VALIDATION_ERROR');
    const notMine = await app.gql(b.token, `mutation { deleteSession(projectId: "beta", id: "${id}") }`);
    expect(notMine.body.errors[0].extensions).toMatchObject({ code: 'FORBIDDEN', projectId: 'beta' });
    const del = await app.gql(a.token, `mutation { deleteSession(projectId: "beta", id: "${id}") }`);
    expect(del.body.data.deleteSession).toBe(true);
    const after = await app.gql(a.token, `{ session(id: "${id}", projectId: "beta") { id } }`);
    expect(after.body.errors[0].extensions).toMatchObject({ code: 'NOT_FOUND', sessionId: id, projectId: 'beta' });
  });

  test('createApiKey and revokeApiKey', async () => {
    const c = await app.gql(a.token, 'mutation { createApiKey(name: "ci", expiresInDays: 30) { token key { id name userId expiresAt revokedAt } } }');
    const { token, key } = c.body.data.createApiKey;
    expect(key).toMatchObject({ name: 'ci', userId: a.id, revokedAt: null });
    expect(Date.parse(key.expiresAt)).toBeGreaterThan(Date.now() + 29 * DAY);
    expect((await app.gql(token, '{ projects { id } }')).status).toBe(200);
    const badName = await app.gql(a.token, 'mutation { createApiKey(name: "") { token } }');
    expect(badName.body.errors[0].extensions.code).toBe('VALIDATION_ERROR');
    const badDays = await app.gql(a.token, 'mutation { createApiKey(name: "k", expiresInDays: 0) { token } }');
    expect(badDays.body.errors[0].extensions.code).toBe('VALIDATION_ERROR');
    const otherUser = await app.gql(b.token, `mutation { revokeApiKey(id: "${key.id}") { id } }`);
    expect(otherUser.body.errors[0].extensions).toMatchObject({ code: 'NOT_FOUND', keyId: key.id });
    const rev = await app.gql(a.token, `mutation { revokeApiKey(id: "${key.id}") { id revokedAt } }`);
    expect(rev.body.data.revokeApiKey.revokedAt).not.toBeNull();
    const denied = await app.gql(token, '{ projects { id } }');
    expect(denied.status).toBe(401);
  });
});

// ---------------------------------------------------------------------------------------------

describe('errors and statuses', () => {
  test('401 UNAUTHENTICATED without or with a bad token', async () => {
    for (const token of [null, 'not-a-jwt']) {
      const r = await app.gql(token, '{ projects { id } }');
      expect(r.status).toBe(401);
      expect(r.body).toEqual({ errors: [{ message: 'Invalid session token', extensions: { code: 'UNAUTHENTICATED' } }] });
    }
  });

  test('400 for unparsable operations', async () => {
    const r = await app.gql(a.token, '{ projects { id ');
    expect(r.status).toBe(400);
    expect(r.body.errors[0].extensions.code).toBe('VALIDATION_ERROR');
    expect(r.body.data).toBeUndefined();
  });

  test('400 for invalid operations', async () => {
    const r = await app.gql(a.token, '{ projects { id nope } }');
    expect(r.status).toBe(400);
    expect(r.body.errors[0]).toMatchObject({ extensions: { code: 'VALIDATION_ERROR' }, message: expect.stringContaining('nope') });
  });

  test('400 for bad variables', async () => {
    const missing = await app.gql(a.token, 'query($id: ID!) { project(id: $id) { id } }');
    expect(missing.status).toBe(400);
    expect(missing.body.errors[0].extensions.code).toBe('VALIDATION_ERROR');
    const wrongType = await app.gql(a.token, 'query($n: Int) { sessions(limit: $n) { id } }', { n: 'ten' });
    expect(wrongType.status).toBe(400);
    expect(wrongType.body.errors[0].extensions.code).toBe('VALIDATION_ERROR');
    const badEnum = await app.gql(a.token, 'query($o: SessionOrder) { sessions(orderBy: $o) { id } }', { o: 'SIDEWAYS' });
    expect(badEnum.status).toBe(400);
    expect(badEnum.body.errors[0].extensions.code).toBe('VALIDATION_ERROR');
  });

  test('400 for bodies that are not one JSON operation', async () => {
    const batched = await app.request('POST', '/api/v1/graphql', { token: a.token, body: [{ query: '{ projects { id } }' }] });
    expect(batched.status).toBe(400);
    expect(batched.body.errors[0].extensions.code).toBe('VALIDATION_ERROR');
    const noQuery = await app.request('POST', '/api/v1/graphql', { token: a.token, body: { variables: {} } });
    expect(noQuery.status).toBe(400);
    expect(noQuery.body.errors[0].extensions.code).toBe('VALIDATION_ERROR');
    const badJson = await app.request('POST', '/api/v1/graphql', { token: a.token, body: '{"query": ', headers: { 'Content-Type': 'application/json' } });
    expect(badJson.status).toBe(400);
    expect(badJson.body.errors[0].extensions.code).toBe('VALIDATION_ERROR');
  });

  test('NOT_FOUND and FORBIDDEN carry path, locations and the id; data is partial', async () => {
    const r = await app.gql(a.token, '{ projects { id }\n  missing: project(id: "no-such") { id }\n  theirs: project(id: "gamma") { id } }');
    expect(r.status).toBe(200);
    expect(r.body.data).toEqual({ projects: [{ id: 'alpha' }, { id: 'beta' }], missing: null, theirs: null });
    const byPath = Object.fromEntries(r.body.errors.map((e: any) => [e.path[0], e]));
    expect(byPath.missing).toEqual({
      message: 'Project not found',
      locations: [{ line: 2, column: 3 }],
      path: ['missing'],
      extensions: { code: 'NOT_FOUND', projectId: 'no-such' },
    });
    expect(byPath.theirs).toEqual({
      message: 'Insufficient permissions',
      locations: [{ line: 3, column: 3 }],
      path: ['theirs'],
      extensions: { code: 'FORBIDDEN', projectId: 'gamma' },
    });
    const s = await app.gql(a.token, `{ session(id: "${SB}", projectId: "gamma") { id } }`);
    expect(s.body.errors[0].extensions).toEqual({ code: 'FORBIDDEN', projectId: 'gamma' });
  });

  test('unexpected errors are masked as INTERNAL_SERVER_ERROR, beside partial data', async () => {
    const spy = jest.spyOn(statsService, 'topLLMModels').mockRejectedValueOnce(new Error('SELECT secret FROM internals'));
    try {
      const r = await app.gql(a.token, '{ stats { totalSessions topLLMModels { model } } }');
      expect(r.status).toBe(200);
      expect(r.body.data).toBeNull(); // topLLMModels is non-null, so null bubbles up to stats → data
      expect(r.body.errors).toEqual([
        {
          message: 'Internal server error',
          locations: [{ line: 1, column: 25 }],
          path: ['stats', 'topLLMModels'],
          extensions: { code: 'INTERNAL_SERVER_ERROR' },
        },
      ]);
      expect(r.text).not.toContain('secret');
    } finally {
      spy.mockRestore();
    }
  });

  test('the default landing page is off: GET without text/html is not a playground', async () => {
    const r = await app.request('GET', '/api/v1/graphql', { token: a.token, headers: { Accept: 'application/json' } });
    expect(r.text).not.toContain('<html');
    expect(r.status).toBe(400);
  });
});

// ---------------------------------------------------------------------------------------------

describe('guards (before execution → 400 VALIDATION_ERROR)', () => {
  /** project → sessions → project → … nested to the given depth of fields. */
  function nested(depth: number): string {
    // depth 1 = project, 2 = sessions, 3 = project, …; innermost selects `id`.
    let inner = 'id';
    for (let d = depth - 1; d >= 2; d--) inner = d % 2 === 0 ? `sessions(limit: 1) { ${inner} }` : `project { ${inner} }`;
    return `{ project(id: "alpha") { ${inner} } }`;
  }

  test('depth 12 runs; depth 13 is rejected', async () => {
    const ok = await app.gql(a.token, nested(12));
    expect(ok.status).toBe(200);
    expect(ok.body.errors).toBeUndefined();
    const deep = await app.gql(a.token, nested(13));
    expect(deep.status).toBe(400);
    expect(deep.body.errors[0].extensions.code).toBe('VALIDATION_ERROR');
    expect(deep.body.errors[0].message).toMatch(/deep/);
  });

  test('depth counts through fragments', async () => {
    const r = await app.gql(
      a.token,
      `query { project(id: "alpha") { ...P } }
       fragment P on Project { sessions(limit: 1) { project { sessions(limit: 1) { project { sessions(limit: 1) { project { sessions(limit: 1) { project { sessions(limit: 1) { project { sessions(limit: 1) { id } } } } } } } } } } } }`,
    );
    expect(r.status).toBe(400);
    expect(r.body.errors[0].extensions.code).toBe('VALIDATION_ERROR');
  });

  test('introspection fields are exempt from depth', async () => {
    const r = await app.gql(
      a.token,
      '{ __schema { types { fields { type { ofType { ofType { ofType { ofType { ofType { ofType { ofType { ofType { ofType { ofType { name } } } } } } } } } } } } } } }',
    );
    expect(r.status).toBe(200);
    expect(r.body.errors).toBeUndefined();
  });

  test('cost budget: markdownContent × limit', async () => {
    const within = await app.gql(a.token, '{ sessions(limit: 200) { markdownContent } x: sessions(limit: 200) { markdownContent } }');
    expect(within.status).toBe(200);
    const over = await app.gql(
      a.token,
      '{ a: sessions(limit: 200) { markdownContent } b: sessions(limit: 200) { markdownContent } c: sessions(limit: 200) { markdownContent } }',
    );
    expect(over.status).toBe(400);
    expect(over.body.errors[0]).toMatchObject({ extensions: { code: 'VALIDATION_ERROR' }, message: expect.stringMatching(/expensive/) });
    // Nested lists multiply: 200 × (1 + 1 + 200 × 2) = 80,400 > 50,000; with one field 40,400 is fine.
    const nestedOk = await app.gql(a.token, '{ sessions(limit: 200) { project { sessions(limit: 200) { id } } } }');
    expect(nestedOk.status).toBe(200);
    const nestedCost = await app.gql(a.token, '{ sessions(limit: 200) { project { sessions(limit: 200) { id name } } } }');
    expect(nestedCost.status).toBe(400);
    // Variables and defaults count too.
    const viaVar = await app.gql(
      a.token,
      'query($n: Int = 200) { a: sessions(limit: $n) { markdownContent } b: sessions(limit: $n) { markdownContent } c: sessions(limit: $n) { markdownContent } }',
    );
    expect(viaVar.status).toBe(400);
  });

  test('100 aliases run; 101 are rejected', async () => {
    const aliases = (n: number) => `{ ${Array.from({ length: n }, (_, i) => `a${i}: apiKeys { id }`).join(' ')} }`;
    const ok = await app.gql(a.token, aliases(100));
    expect(ok.status).toBe(200);
    const over = await app.gql(a.token, aliases(101));
    expect(over.status).toBe(400);
    expect(over.body.errors[0].extensions.code).toBe('VALIDATION_ERROR');
  });

  test('query text over 100 KB → 400', async () => {
    const padding = '#'.repeat(100 * 1024) + '\n';
    const r = await app.gql(a.token, `${padding}{ projects { id } }`);
    expect(r.status).toBe(400);
    expect(r.body.errors[0].extensions.code).toBe('VALIDATION_ERROR');
    const small = await app.gql(a.token, `${'#'.repeat(90 * 1024)}\n{ projects { id } }`);
    expect(small.status).toBe(200);
  });

  test.each([
    ['sessions(limit: 0)', '{ sessions(limit: 0) { id } }', undefined],
    ['sessions(limit: 201)', '{ sessions(limit: 201) { id } }', undefined],
    ['sessionsConnection(first: 201) via variable', 'query($n: Int) { sessionsConnection(first: $n) { edges { cursor } } }', { n: 201 }],
    ['Project.sessions(limit: -1)', '{ projects { sessions(limit: -1) { id } } }', undefined],
    ['Project.sessionsConnection(first: 0)', '{ projects { sessionsConnection(first: 0) { edges { cursor } } } }', undefined],
    ['stats.topLLMModels(limit: 500)', '{ stats { topLLMModels(limit: 500) { model } } }', undefined],
    ['searchSessions(limit: 0)', '{ searchSessions(query: "x", limit: 0) { total } }', undefined],
    ['SearchResult.matchingExchanges(limit: 0)', '{ searchSessions(query: "x") { results { matchingExchanges(limit: 0) { id } } } }', undefined],
  ])('%s → 400', async (_name, query, variables) => {
    const r = await app.gql(a.token, query, variables);
    expect(r.status).toBe(400);
    expect(r.body.errors[0].extensions.code).toBe('VALIDATION_ERROR');
  });

  test('limits of 1 and 200 are accepted', async () => {
    const r = await app.gql(a.token, '{ one: sessions(limit: 1) { id } max: sessions(limit: 200) { id } }');
    expect(r.status).toBe(200);
    expect(r.body.data.one).toHaveLength(1);
  });
});
