import { PROJECT_COLORS, PROJECT_ICONS } from '../../src/domain/project';
import { SID, startTestApp, type TestApp, type TestUser } from '../support/app';

/**
 * The documented exact 400 messages for every input of both front doors, pinned before
 * the hand-written validators were replaced by zod schemas (src/services/inputs.ts), so that the
 * move changes no message and no order of checks (validation before existence and ownership).
 * POST /keys and createApiKey are pinned in rest-input-schemas.test.ts. The upload body (PUT) is
 * pinned here too (pinned while it was still validated by hand; now src/domain/upload.ts's
 * UploadInput, plain zod so that it runs on the upload worker threads).
 */

let app: TestApp;
let user: TestUser;
const ICONS = `Invalid value for icon. Must be one of: ${PROJECT_ICONS.join(', ')}`;
const COLORS = `Invalid value for color. Must be one of: ${PROJECT_COLORS.join(', ')}`;

beforeAll(async () => {
  app = await startTestApp({ rateLimit: false });
  user = await app.createUser('messages');
  const p = await app.request('POST', '/api/v1/projects', { token: user.token, body: { id: 'mine', name: 'Mine' } });
  expect(p.status).toBe(201);
  const s = await app.request('PUT', `/api/v1/projects/mine/sessions/${SID(1)}`, { token: user.token, body: { name: 's', markdown: '_**User**_\n\nhi\n' } });
  expect(s.status).toBe(201);
});
afterAll(async () => {
  await app?.close();
});

const rest = (method: string, path: string, body?: unknown) => app.request(method, `/api/v1${path}`, { token: user.token, body });
function expect400(r: Awaited<ReturnType<typeof rest>>, message: string) {
  expect({ status: r.status, body: r.body }).toEqual({ status: 400, body: { success: false, error: message } });
}

describe('REST bodies', () => {
  test.each([
    ['an array', [], 'Request body must be a JSON object'],
    ['a bad id (before the name)', { id: '-bad' }, 'Invalid value for id: must match ^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$'],
    ['a numeric id', { id: 5, name: 'n' }, 'Invalid value for id: must match ^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$'],
    ['no name', {}, 'Missing required field: name'],
    ['a null name', { name: null }, 'Missing required field: name'],
    ['a numeric name', { name: 5 }, 'Invalid type for name: expected a string'],
    ['an empty name', { name: '' }, 'Invalid value for name: must not be empty'],
    ['a name of 256', { name: 'x'.repeat(256) }, 'Invalid value for name: must be 1-255 characters'],
    ['a lone surrogate', { name: 'a\ud800' }, 'Invalid value for name: not valid Unicode text'],
    ['an unknown icon', { name: 'n', icon: 'Nope' }, ICONS],
    ['a numeric icon', { name: 'n', icon: 1 }, ICONS],
    ['an unknown color', { name: 'n', color: 'red' }, COLORS],
    ['an icon checked before the color', { name: 'n', icon: 'x', color: 'y' }, ICONS],
  ])('POST /projects with %s', async (_what, body, message) => {
    expect400(await rest('POST', '/projects', body), message);
  });

  test('POST /projects: null icon and color take the defaults; unknown fields are ignored', async () => {
    const r = await rest('POST', '/projects', { id: 'defaults', name: 'D', icon: null, color: null, other: 1 });
    expect(r.status).toBe(201);
    expect(r.body.data.project).toMatchObject({ id: 'defaults', icon: 'Code2', color: 'blue' });
  });

  test.each([
    ['an array', [], 'Request body must be a JSON object'],
    ['nothing', {}, 'Nothing to update: send name, icon, color, retentionDays or legalHold'],
    ['only nulls of icon and color', { icon: null, color: null }, 'Nothing to update: send name, icon, color, retentionDays or legalHold'],
    ['a null name', { name: null }, 'Invalid type for name: expected a string'],
    ['an empty name', { name: '' }, 'Invalid value for name: must not be empty'],
    ['an unknown color', { color: 'red' }, COLORS],
  ])('PATCH /projects/{id} with %s (validation before existence)', async (_what, body, message) => {
    expect400(await rest('PATCH', '/projects/mine', body), message);
    expect400(await rest('PATCH', '/projects/nobody-has-this', body), message);
  });

  test.each([
    ['an array', [], 'Request body must be a JSON object'],
    ['nothing', {}, 'Nothing to update: send name, tags or userTitle'],
    ['a numeric name', { name: 5 }, 'Invalid type for name: expected a string'],
    ['an empty name', { name: '' }, 'Invalid value for name: must not be empty'],
    ['a null name', { name: null }, 'Invalid type for name: expected a string'],
    ['tags as a string', { tags: 'x' }, 'Invalid type for metadata.tags: expected an array of strings'],
    ['an empty tag', { tags: ['ok', ''] }, 'Invalid value for metadata.tags[1]: must not be empty'],
    ['a numeric tag', { tags: [1] }, 'Invalid type for metadata.tags[0]: expected a string'],
    ['201 tags', { tags: Array.from({ length: 201 }, (_, i) => `t${i}`) }, 'Invalid value for metadata.tags: at most 200 items'],
    ['a userTitle of 1001', { userTitle: 'x'.repeat(1001) }, 'Invalid value for userTitle: must be 0-1000 characters'],
    ['a numeric userTitle', { userTitle: 5 }, 'Invalid type for userTitle: expected a string'],
    ['the name checked first', { name: '', tags: 'x', userTitle: 5 }, 'Invalid value for name: must not be empty'],
  ])('PATCH a session with %s (validation before existence)', async (_what, body, message) => {
    expect400(await rest('PATCH', `/projects/mine/sessions/${SID(1)}`, body), message);
    expect400(await rest('PATCH', `/projects/nobody-has-this/sessions/${SID(1)}`, body), message);
  });

  test.each([
    ['an array', [], 'Request body must be a JSON object'],
    ['no query', {}, 'Missing required field: query'],
    ['a null query', { query: null }, 'Missing required field: query'],
    ['a numeric query', { query: 5 }, 'Invalid type for query: expected a string'],
    ['a numeric projectId', { query: 'x', projectId: 5 }, 'Invalid type for projectId: expected a string'],
    ['a blank query', { query: '   ' }, 'Invalid value for query: must not be empty'],
    ['a query of 513 characters', { query: 'a'.repeat(513) }, 'Invalid value for query: at most 512 characters'],
  ])('POST /search/resume with %s', async (_what, body, message) => {
    expect400(await rest('POST', '/search/resume', body), message);
  });

  test('POST /search/resume: a null projectId searches every project; unknown fields are ignored', async () => {
    const r = await rest('POST', '/search/resume', { query: 'nothingmatchesthis', projectId: null, other: 1 });
    expect({ status: r.status, body: r.body }).toEqual({ status: 200, body: { success: true, data: { results: [] } } });
  });

  test('PATCH a session: an empty and a null userTitle are accepted', async () => {
    expect((await rest('PATCH', `/projects/mine/sessions/${SID(1)}`, { userTitle: '' })).status).toBe(200);
    const r = await rest('PATCH', `/projects/mine/sessions/${SID(1)}`, { userTitle: null, tags: [] });
    expect(r.status).toBe(200);
    expect(r.body.data.session).toMatchObject({ userTitle: null, metadata: { tags: [] } });
  });
});

describe('PUT a session (the upload body)', () => {
  const ok = { name: 'n', markdown: 'm' };
  const extras = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, 'v']));
  test.each([
    ['an array', [], 'Request body must be a JSON object'],
    ['no name', {}, 'Missing required field: name'],
    ['a null name', { name: null, markdown: 'm' }, 'Missing required field: name'],
    ['a numeric name', { name: 5, markdown: 'm' }, 'Invalid type for name: expected a string'],
    ['an empty name', { name: '', markdown: 'm' }, 'Invalid value for name: must not be empty'],
    ['a name of 256', { name: 'x'.repeat(256), markdown: 'm' }, 'Invalid value for name: must be 1-255 characters'],
    ['no markdown', { name: 'n' }, 'Missing required field: markdown'],
    ['a numeric markdown', { name: 'n', markdown: 5 }, 'Invalid type for markdown: expected a string'],
    ['an empty markdown', { name: 'n', markdown: '' }, 'Invalid value for markdown: must not be empty'],
    ['a lone surrogate in markdown', { name: 'n', markdown: 'a\udc00' }, 'Invalid value for markdown: not valid Unicode text'],
    ['a numeric rawData', { ...ok, rawData: 5 }, 'Invalid type for rawData: expected a string'],
    ['a numeric sessionData', { ...ok, sessionData: 5 }, 'Invalid type for sessionData: expected a string'],
    ['an empty projectName', { ...ok, projectName: '' }, 'Invalid value for projectName: must not be empty'],
    ['a bad startedAt', { ...ok, startedAt: 'yesterday' }, 'Invalid value for startedAt: expected an ISO 8601 timestamp'],
    ['a numeric endedAt', { ...ok, endedAt: 5 }, 'Invalid value for endedAt: expected an ISO 8601 timestamp'],
    ['metadata as a string', { ...ok, metadata: 'x' }, 'Invalid type for metadata: expected an object'],
    ['metadata as an array', { ...ok, metadata: [] }, 'Invalid type for metadata: expected an object'],
    ['a numeric clientName', { ...ok, metadata: { clientName: 5 } }, 'Invalid type for metadata.clientName: expected a string'],
    ['a clientName of 256', { ...ok, metadata: { clientName: 'x'.repeat(256) } }, 'Invalid value for metadata.clientName: must be 0-255 characters'],
    ['tags as a string', { ...ok, metadata: { tags: 'x' } }, 'Invalid type for metadata.tags: expected an array of strings'],
    [
      '201 models',
      { ...ok, metadata: { llmModels: Array.from({ length: 201 }, (_, i) => `m${i}`) } },
      'Invalid value for metadata.llmModels: at most 200 items',
    ],
    ['an empty branch', { ...ok, metadata: { gitBranches: ['main', ''] } }, 'Invalid value for metadata.gitBranches[1]: must not be empty'],
    ['33 extra keys', { ...ok, metadata: extras(33) }, 'Invalid metadata: at most 32 extra keys'],
    ['a numeric extra value', { ...ok, metadata: { title: 5 } }, 'Invalid type for metadata.title: extra metadata values must be strings'],
    [
      'an extra value over 1 KiB',
      { ...ok, metadata: { title: 'x'.repeat(1025) } },
      'Invalid value for metadata.title: extra metadata keys and values are limited to 1 KiB',
    ],
    [
      'an extra value of 1 KiB in 342 three-byte characters',
      { ...ok, metadata: { title: '€'.repeat(342) } },
      'Invalid value for metadata.title: extra metadata keys and values are limited to 1 KiB',
    ],
    [
      'an extra key over 1 KiB',
      { ...ok, metadata: { ['k'.repeat(1025)]: 'v' } },
      `Invalid value for metadata.${'k'.repeat(1025)}: extra metadata keys and values are limited to 1 KiB`,
    ],
    ['a lone surrogate in an extra value', { ...ok, metadata: { title: 'a\ud800' } }, 'Invalid value for metadata.title: not valid Unicode text'],
    ['a lone surrogate in rawData', { ...ok, rawData: '\udc00' }, 'Invalid value for rawData: not valid Unicode text'],
    ['a lone surrogate in sessionData', { ...ok, sessionData: 'x\ud800' }, 'Invalid value for sessionData: not valid Unicode text'],
    ['a null markdown', { name: 'n', markdown: null }, 'Missing required field: markdown'],
    ['a numeric projectName', { ...ok, projectName: 5 }, 'Invalid type for projectName: expected a string'],
    ['a startedAt that is no date', { ...ok, startedAt: '2024-13-45T00:00:00Z' }, 'Invalid value for startedAt: expected an ISO 8601 timestamp'],
    ['an empty tag', { ...ok, metadata: { tags: [''] } }, 'Invalid value for metadata.tags[0]: must not be empty'],
    ['a numeric model', { ...ok, metadata: { llmModels: ['a', 2] } }, 'Invalid type for metadata.llmModels[1]: expected a string'],
    // Order: the name before the content, the content before the metadata; documented fields before extra keys; the count of extra keys before their values.
    ['the name checked first', { name: '', markdown: 5, metadata: 'x' }, 'Invalid value for name: must not be empty'],
    ['the markdown before rawData', { name: 'n', markdown: '', rawData: 5 }, 'Invalid value for markdown: must not be empty'],
    ['endedAt before metadata', { ...ok, endedAt: 'x', metadata: 5 }, 'Invalid value for endedAt: expected an ISO 8601 timestamp'],
    [
      'a documented field before the extra keys',
      { ...ok, metadata: { ...extras(33), tags: 'x' } },
      'Invalid type for metadata.tags: expected an array of strings',
    ],
    ['the count of extra keys before their values', { ...ok, metadata: { ...extras(32), z: 5 } }, 'Invalid metadata: at most 32 extra keys'],
    ['extra values in key order', { ...ok, metadata: { a: 5, b: 'x'.repeat(1025) } }, 'Invalid type for metadata.a: extra metadata values must be strings'],
  ])('%s', async (_what, body, message) => {
    expect400(await rest('PUT', `/projects/mine/sessions/${SID(1)}`, body), message);
  });

  test('accepted: null and empty optional fields, 32 extra keys, null extra values (dropped), a __proto__ key, a value of exactly 1 KiB', async () => {
    const sid = '6a6a6a6a-1111-4222-8333-444455556667';
    const metadata = JSON.parse(
      JSON.stringify({ ...extras(30), clientName: null, tags: null, skipped: null, title: '€'.repeat(341) + 'x' }).replace('"k0"', '"__proto__"'),
    );
    const r = await rest('PUT', `/projects/mine/sessions/${sid}`, {
      ...ok,
      rawData: null,
      sessionData: '',
      projectName: null,
      startedAt: null,
      endedAt: null,
      metadata,
    });
    expect(r.status).toBe(201);
    const g = await rest('GET', `/projects/mine/sessions/${sid}`);
    expect(g.body.data.session.metadata).toMatchObject({ clientName: null, tags: [], title: '€'.repeat(341) + 'x', k1: 'v' });
    expect(Object.prototype.hasOwnProperty.call(g.body.data.session.metadata, '__proto__')).toBe(true);
    expect(Object.prototype.hasOwnProperty.call(g.body.data.session.metadata, 'skipped')).toBe(false);
  });

  test('path ids are checked first: a bad project or session id is a 400 on PUT', async () => {
    expect400(await rest('PUT', `/projects/-bad/sessions/${SID(1)}`, {}), 'Invalid project id: must match ^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$');
    expect400(await rest('PUT', '/projects/mine/sessions/not-a-uuid', {}), 'Invalid session id: must be a UUID');
  });
});

describe('REST query parameters', () => {
  test.each([
    ['/projects/mine/sessions?limit=0', 'Invalid value for limit: must be an integer between 1 and 1000'],
    ['/projects/mine/sessions?limit=1001', 'Invalid value for limit: must be an integer between 1 and 1000'],
    ['/projects/mine/sessions?limit=abc', 'Invalid value for limit: must be an integer between 1 and 1000'],
    ['/projects/mine/sessions?limit=1.5', 'Invalid value for limit: must be an integer between 1 and 1000'],
    ['/projects/mine/sessions?limit=1&limit=2', 'Invalid value for limit: must be an integer between 1 and 1000'],
    ['/projects/mine/sessions?cursor=', 'Invalid cursor'],
    ['/projects/mine/sessions?cursor=garbage', 'Invalid cursor'],
    ['/projects/nobody-has-this/sessions?limit=0', 'Invalid value for limit: must be an integer between 1 and 1000'],
    ['/projects/nobody-has-this/sessions?cursor=garbage', 'Invalid cursor'],
    ['/projects/mine/sessions?resumable=yes', 'Invalid value for resumable: must be true or false'],
    ['/projects?resumable=1', 'Invalid value for resumable: must be true or false'],
    ['/sessions/recent?limit=0', 'Invalid value for limit: must be an integer between 1 and 100'],
    ['/sessions/recent?limit=101', 'Invalid value for limit: must be an integer between 1 and 100'],
    [`/projects/mine/sessions/${SID(1)}/exchanges?offset=-1`, 'Invalid value for offset: must be an integer between 0 and 10000000'],
    [`/projects/mine/sessions/${SID(1)}/exchanges?offset=10000001`, 'Invalid value for offset: must be an integer between 0 and 10000000'],
    [`/projects/mine/sessions/${SID(1)}/exchanges?limit=0`, 'Invalid value for limit: must be an integer between 1 and 1000'],
    [`/projects/mine/sessions/${SID(1)}/exchanges?limit=1001`, 'Invalid value for limit: must be an integer between 1 and 1000'],
    [`/projects/mine/sessions/${SID(1)}/exchanges?content=no`, 'Invalid value for content: must be true or false'],
    [`/projects/nobody-has-this/sessions/${SID(1)}/exchanges?limit=0`, 'Invalid value for limit: must be an integer between 1 and 1000'],
  ])('GET %s', async (path, message) => {
    expect400(await rest('GET', path), message);
  });

  test('the bounds themselves are accepted', async () => {
    expect((await rest('GET', '/projects/mine/sessions?limit=1000')).status).toBe(200);
    expect((await rest('GET', '/projects/mine/sessions?limit=1')).status).toBe(200);
    expect((await rest('GET', '/sessions/recent?limit=100')).status).toBe(200);
    expect((await rest('GET', `/projects/mine/sessions/${SID(1)}/exchanges?offset=0&limit=1000&content=false`)).status).toBe(200);
  });
});

describe('GraphQL arguments and inputs', () => {
  async function error(query: string, variables?: Record<string, unknown>) {
    const r = await app.gql(user, query, variables);
    expect(r.body.errors?.[0]?.extensions?.code).toBe('VALIDATION_ERROR');
    return { status: r.status, message: r.body.errors[0].message as string };
  }
  // Resolved in execution: HTTP 200 with the error beside the data.
  const resolved = (message: string) => ({ status: 200, message });
  // Rejected before execution by the guards: HTTP 400.
  const guarded = (message: string) => ({ status: 400, message });

  test.each([
    [
      'createProject: a bad id',
      'mutation { createProject(input: {id: "-bad", name: "n"}) { id } }',
      'Invalid value for id: must match ^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$',
    ],
    ['createProject: an empty name', 'mutation { createProject(input: {name: ""}) { id } }', 'Invalid value for name: must not be empty'],
    ['createProject: an unknown icon', 'mutation { createProject(input: {name: "n", icon: "Nope"}) { id } }', ICONS],
    [
      'updateProject: nothing',
      'mutation { updateProject(id: "mine", input: {}) { id } }',
      'Nothing to update: send name, icon, color, retentionDays or legalHold',
    ],
    ['updateProject: a null name', 'mutation { updateProject(id: "mine", input: {name: null}) { id } }', 'Invalid type for name: expected a string'],
    ['updateProject: an unknown color', 'mutation { updateProject(id: "nobody-has-this", input: {color: "red"}) { id } }', COLORS],
    [
      'updateSession: nothing',
      `mutation { updateSession(projectId: "mine", id: "${SID(1)}", input: {}) { id } }`,
      'Nothing to update: send name, tags or userTitle',
    ],
    [
      'updateSession: an empty tag',
      `mutation { updateSession(projectId: "mine", id: "${SID(1)}", input: {tags: [""]}) { id } }`,
      'Invalid value for metadata.tags[0]: must not be empty',
    ],
    [
      'updateSession: a long userTitle',
      `mutation { updateSession(projectId: "nobody-has-this", id: "${SID(1)}", input: {userTitle: "${'x'.repeat(1001)}"}) { id } }`,
      'Invalid value for userTitle: must be 0-1000 characters',
    ],
    ['searchSessions: a blank query', '{ searchSessions(query: "  ") { total } }', 'Invalid value for query: must not be empty'],
    ['searchSessions: 513 characters', `{ searchSessions(query: "${'a'.repeat(513)}") { total } }`, 'Invalid value for query: at most 512 characters'],
    [
      'searchSessions: 33 words',
      `{ searchSessions(query: "${Array.from({ length: 33 }, (_, i) => `w${i}`).join(' ')}") { total } }`,
      'Invalid value for query: at most 32 different words',
    ],
    ['searchSessions: a negative offset', '{ searchSessions(query: "x", offset: -1) { total } }', 'Invalid value for offset: must be an integer of at least 0'],
    [
      'sessionsByDay: 0 days',
      '{ project(id: "mine") { stats { sessionsByDay(days: 0) { date } } } }',
      'Invalid value for days: must be an integer between 1 and 366',
    ],
    [
      'sessionsByDay: 367 days',
      '{ project(id: "mine") { stats { sessionsByDay(days: 367) { date } } } }',
      'Invalid value for days: must be an integer between 1 and 366',
    ],
    [
      'exchanges: a negative offset',
      `{ session(id: "${SID(1)}", projectId: "mine") { exchanges(offset: -1) { total } } }`,
      'Invalid value for offset: must be an integer between 0 and 10000000',
    ],
    [
      'analytics: a bad start',
      '{ analytics(timeRange: {start: "nope", end: "2024-01-01T00:00:00Z"}) { totalSessions } }',
      'Invalid value for timeRange.start: expected an ISO 8601 timestamp',
    ],
    [
      'analytics: a bad end',
      '{ analytics(timeRange: {start: "2024-01-01T00:00:00Z", end: "2024-13-45T00:00:00Z"}) { totalSessions } }',
      'Invalid value for timeRange.end: expected an ISO 8601 timestamp',
    ],
    [
      'analytics: start after end',
      '{ analytics(timeRange: {start: "2024-02-01T00:00:00Z", end: "2024-01-01T00:00:00Z"}) { totalSessions } }',
      'Invalid timeRange: start must not be after end',
    ],
  ])('%s', async (_what, query, message) => {
    expect(await error(query)).toEqual(resolved(message));
  });

  test.each([
    ['101 projectIds', { projectIds: Array.from({ length: 101 }, (_, i) => `p${i}`) }, 'Invalid value for projectIds: at most 100 values'],
    ['101 tags', { tags: Array.from({ length: 101 }, (_, i) => `t${i}`) }, 'Invalid value for tags: at most 100 values'],
    ['101 clientNames', { clientNames: Array.from({ length: 101 }, (_, i) => `c${i}`) }, 'Invalid value for clientNames: at most 100 values'],
    ['a bad dateRange.start', { dateRange: { start: 'nope' } }, 'Invalid value for dateRange.start: expected an ISO 8601 timestamp'],
    ['a bad dateRange.end', { dateRange: { end: 'nope' } }, 'Invalid value for dateRange.end: expected an ISO 8601 timestamp'],
    [
      'a dateRange that ends before it starts',
      { dateRange: { start: '2024-02-01T00:00:00Z', end: '2024-01-01T00:00:00Z' } },
      'Invalid dateRange: start must not be after end',
    ],
    ['createdAfter 0', { createdAfter: 0 }, 'Invalid value for createdAfter: must be an integer of at least 1 (days)'],
    ['an unknown timeFilter', { timeFilter: 'yesterday' }, 'Invalid value for timeFilter. Must be one of: last24hours, last7days, last30days, last90days'],
    [
      'a timeFilter naming an inherited property',
      { timeFilter: 'toString' },
      'Invalid value for timeFilter. Must be one of: last24hours, last7days, last30days, last90days',
    ],
  ])('filters with %s, on sessions, the connection and search alike', async (_what, filters, message) => {
    for (const query of [
      'query($f: SessionFilters) { sessions(filters: $f) { id } }',
      'query($f: SessionFilters) { sessionsConnection(filters: $f) { edges { cursor } } }',
      'query($f: SessionFilters) { searchSessions(query: "x", filters: $f) { total } }',
      'query($f: SessionFilters) { project(id: "mine") { sessions(filters: $f) { id } } }',
    ]) {
      expect(await error(query, { f: filters })).toEqual(resolved(message));
    }
  });

  test.each([
    ['sessions(limit: 0)', '{ sessions(limit: 0) { id } }', 'Invalid value for limit of sessions: must be between 1 and 200'],
    [
      'sessionsConnection(first: 201)',
      '{ sessionsConnection(first: 201) { edges { cursor } } }',
      'Invalid value for first of sessionsConnection: must be between 1 and 200',
    ],
    [
      'searchSessions(limit: 201)',
      '{ searchSessions(query: "x", limit: 201) { total } }',
      'Invalid value for limit of searchSessions: must be between 1 and 200',
    ],
    ['sessionFacets(limit: 0)', '{ sessionFacets(limit: 0) { tags { value } } }', 'Invalid value for limit of sessionFacets: must be between 1 and 200'],
    [
      'exchanges(limit: 201)',
      `{ session(id: "${SID(1)}", projectId: "mine") { exchanges(limit: 201) { total } } }`,
      'Invalid value for limit of exchanges: must be between 1 and 200',
    ],
  ])('page sizes are bounded before execution: %s', async (_what, query, message) => {
    expect(await error(query)).toEqual(guarded(message));
  });

  test('sessionsConnection: a cursor that is not one', async () => {
    expect(await error('{ sessionsConnection(after: "garbage") { edges { cursor } } }')).toEqual(resolved('Invalid cursor'));
  });
});
