import { startTestApp, type TestApp } from '../support/app';

/** The GraphQL budget: the limiter runs after authentication, per operation. */
let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ env: { RATE_LIMIT_GRAPHQL_PER_HOUR: '2' } });
});
afterAll(() => app?.close());

test('the third operation of the hour → 429 RATE_LIMITED in GraphQL’s envelope; the playground is not counted', async () => {
  const u = await app.createUser('limited');
  const q = { query: '{ projects { id } }' };
  for (let i = 0; i < 3; i++) {
    const page = await app.request('GET', '/api/v1/graphql', { headers: { Accept: 'text/html' } });
    expect(page.status).toBe(200);
  }
  expect((await app.request('POST', '/api/v1/graphql', { token: u.token, body: q })).status).toBe(200);
  const second = await app.request('POST', '/api/v1/graphql', { token: u.token, body: q });
  expect(second.status).toBe(200);
  expect(second.headers['x-ratelimit-remaining']).toBe('0');
  const third = await app.request('POST', '/api/v1/graphql', { token: u.token, body: q });
  expect(third.status).toBe(429);
  expect(third.body.errors).toHaveLength(1);
  expect(third.body.errors[0].extensions.code).toBe('RATE_LIMITED');
  expect(third.body.errors[0].message).toMatch(/^Rate limit exceeded\. Try again in \d+ seconds\.$/);
  // Authentication comes first: a bad token is a 401, not a 429.
  const bad = await app.request('POST', '/api/v1/graphql', { token: 'nope', body: q });
  expect(bad.status).toBe(401);
  expect(bad.body.errors[0].extensions.code).toBe('UNAUTHENTICATED');
});
