/**
 * FAST_PATHS=off (src/http/fast/README.md) changes how the service gets to its answers, never the
 * answers: two apps on one database, one with the fast paths and one without, are sent the same
 * requests and give the same status, headers and bytes.
 */
import { SID, startTestApp, type TestApp, type TestResponse, type TestUser } from '../support/app';

let fast: TestApp;
let plain: TestApp;
let user: TestUser;

beforeAll(async () => {
  fast = await startTestApp();
  plain = await startTestApp({ db: fast.db, env: { FAST_PATHS: 'off', WORKERS_ENABLED: 'false' } });
  user = await fast.createUser('fast-paths');
  await fast.upload(user, 'fast-paths', SID(1), { name: 'on and off', markdown: '# Fast paths\n\nThe same answer either way.\n' });
  // As many requests to each app's own rate limiter before the cases (X-RateLimit-Remaining).
  expect((await plain.request('GET', '/api/v1/sessions/recent', { token: user.token })).status).toBe(200);
});
afterAll(async () => {
  await plain?.close();
  await fast?.close();
});

test('the apps run with and without the fast paths', () => {
  expect(fast.deps.config.fastPaths).toBe(true);
  expect(plain.deps.config.fastPaths).toBe(false);
});

/** What must be the same: the status, every header but the date and the rate limit's reset second, the bytes. */
const answer = (r: TestResponse) => {
  const { date: _date, 'x-ratelimit-reset': _reset, ...headers } = r.headers;
  return { status: r.status, headers, body: r.raw.toString('latin1') };
};

const session = `/api/v1/projects/fast-paths/sessions/${SID(1)}`;
const cases: Array<[name: string, method: string, path: string, status: number, headers?: Record<string, string>, withToken?: boolean]> = [
  ['a session read (JSON)', 'GET', session, 200],
  ['a markdown download', 'GET', session, 200, { Accept: 'text/markdown' }],
  ['a HEAD of a session', 'HEAD', session, 200],
  ['a GET answering HEAD (no HEAD operation of its own)', 'HEAD', '/api/v1/sessions/recent', 200],
  ['a conditional read (304)', 'GET', session, 304, { 'If-None-Match': '*' }],
  ['a JSON list', 'GET', '/api/v1/projects/fast-paths/sessions', 200],
  ['a path in another case with a trailing slash', 'GET', `/API/v1/Projects/fast-paths/sessions/${SID(1)}/`, 200],
  ['a literal segment before a parameter', 'GET', '/api/v1/projects/fast-paths/sessions/sizes', 200],
  ['an error answer: an unknown session (404)', 'GET', `/api/v1/projects/fast-paths/sessions/${SID(2)}`, 404],
  ['an error answer: no credential (401)', 'GET', session, 401, {}, false],
  ['an error answer: a badly encoded path (400)', 'GET', '/api/v1/projects/%E0%A4%A/sessions', 400],
  ['an error answer: unacceptable (406)', 'GET', session, 406, { Accept: 'image/png' }],
  ['a path outside the route table (404)', 'GET', '/api/v1/no-such-operation', 404],
  ['an OPTIONS request without an Origin', 'OPTIONS', session, 404],
];

test.each(cases)('%s: the same answer', async (_name, method, path, status, headers = {}, withToken = true) => {
  const send = (app: TestApp) => app.request(method, path, { token: withToken ? user.token : null, headers: { 'X-Request-Id': 'fast-paths-1', ...headers } });
  // One after the other: each app's own rate limiter counts the same requests.
  const on = await send(fast);
  const off = await send(plain);
  expect(on.status).toBe(status);
  expect(answer(off)).toEqual(answer(on));
  expect(on.headers['x-request-id']).toBe('fast-paths-1');
});
