import jwt from 'jsonwebtoken';
import { createUser } from '../../src/services/users';
import { operatorCtx } from '../../src/services/context';
import { startTestApp, type TestApp } from '../support/app';
import { browser, type Browser } from '../support/cookie-client';

let app: TestApp;
const PASSWORD = 'correct horse battery';
const UA = 'specstory-cli/1.12.0 SpecStory, Inc.';
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
let seq = 0;

beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app?.close());

async function signedIn(): Promise<{ b: Browser; id: string; email: string }> {
  const email = `dev-${process.pid}-${++seq}@example.test`;
  const u = await createUser(operatorCtx(app.deps.db), email, 'Dev', { password: PASSWORD });
  const b = browser(app);
  expect((await b.signIn(email, PASSWORD)).status).toBe(200);
  return { b, id: u.id, email };
}

/** The device-login request exactly as the upload CLI sends it (pkg/cloud/auth.go). */
const cliLogin = (deviceCode: string, extra: Record<string, string> = {}) =>
  app.request('POST', '/api/v1/device-login', {
    body: {
      device_code: deviceCode,
      hostname: 'ada-laptop',
      os: 'darwin',
      os_version: '14.5',
      os_display_name: 'macOS Sonoma',
      architecture: 'arm64',
      username: 'ada',
      client: 'specstory-cli',
      client_version: '1.12.0',
      ...extra,
    },
    headers: { Accept: 'application/json', 'User-Agent': UA },
  });

const cliRefresh = (refreshToken: string) =>
  app.request('POST', '/api/v1/device-refresh', { headers: { Authorization: `Bearer ${refreshToken}`, Accept: 'application/json', 'User-Agent': UA } });
const cliLogout = (refreshToken: string) =>
  app.request('POST', '/api/v1/device-logout', { headers: { Authorization: `Bearer ${refreshToken}`, 'User-Agent': UA } });

test('/cli-login code: 6 letters and digits, valid 10 minutes; needs a signed-in user', async () => {
  const { b } = await signedIn();
  const r = await b.request('POST', '/api/v1/device-codes');
  expect(r.status).toBe(201);
  expect(r.body.data.code).toMatch(/^[A-Z0-9]{6}$/);
  expect(r.body.data.expiresAt).toMatch(ISO);
  const ttl = Date.parse(r.body.data.expiresAt) - Date.now();
  expect(ttl).toBeGreaterThan(9 * 60_000);
  expect(ttl).toBeLessThanOrEqual(10 * 60_000);
  expect((await app.request('POST', '/api/v1/device-codes')).status).toBe(401);
});

test('the full flow as the CLI runs it: login → refresh → data with the access token → logout', async () => {
  const { b, id, email } = await signedIn();
  const { code } = (await b.request('POST', '/api/v1/device-codes')).body.data;
  // The CLI sends the code as typed, dash removed; case does not matter.
  const login = await cliLogin(code.toLowerCase());
  expect(login.status).toBe(200);
  expect(Object.keys(login.body).sort()).toEqual(['createdAt', 'expiresAt', 'refreshToken', 'user']);
  expect(login.body.user).toEqual({ email });
  expect(login.body.createdAt).toMatch(ISO);
  const years = (Date.parse(login.body.expiresAt) - Date.parse(login.body.createdAt)) / (365 * 86_400_000);
  expect(years).toBeGreaterThan(9.99);
  expect(years).toBeLessThan(10.01);

  // Listed among the keys as `<client> on <hostname>`, revocable like a key.
  const keys = await b.request('GET', '/api/v1/keys');
  const row = keys.body.data.keys.find((k: any) => k.name === 'specstory-cli on ada-laptop');
  expect(row).toMatchObject({ userId: id, revokedAt: null, expiresAt: login.body.expiresAt });
  expect(keys.text).not.toContain(login.body.refreshToken);

  const refreshed = await cliRefresh(login.body.refreshToken);
  expect(refreshed.status).toBe(200);
  expect(Object.keys(refreshed.body).sort()).toEqual(['accessToken', 'createdAt', 'expiresAt']);
  const ttl = Date.parse(refreshed.body.expiresAt) - Date.parse(refreshed.body.createdAt);
  expect(ttl).toBeGreaterThan(59 * 60_000);
  expect(ttl).toBeLessThanOrEqual(60 * 60_000);
  const claims = jwt.decode(refreshed.body.accessToken) as any;
  expect(claims.exp - claims.iat).toBeLessThanOrEqual(3600);

  const access = refreshed.body.accessToken;
  const put = await app.request('PUT', '/api/v1/projects/833c-d926-f753-7b4a/sessions/0e6a2d7c-1111-4222-8333-444455556666', {
    token: access,
    body: { name: 'From the CLI', markdown: '# hi', projectName: 'CLI' },
    headers: { 'User-Agent': UA },
  });
  expect(put.status).toBe(201);
  const gql = await app.request('POST', '/api/v1/graphql', { token: access, body: { query: '{ projects { id } }' } });
  expect(gql.body.data.projects.map((p: any) => p.id)).toEqual(['833c-d926-f753-7b4a']);

  // A refresh token is not an API key.
  for (const [m, p] of [
    ['GET', '/api/v1/projects'],
    ['GET', '/api/v1/keys'],
    ['POST', '/api/v1/device-codes'],
  ] as const) {
    const r = await app.request(m, p, { token: login.body.refreshToken });
    expect(r.status).toBe(401);
    expect(r.body).toEqual({ success: false, error: 'Invalid session token' });
  }
  expect((await app.request('POST', '/api/v1/graphql', { token: login.body.refreshToken, body: { query: '{ projects { id } }' } })).status).toBe(401);
  // And an access token is not a refresh token.
  expect((await cliRefresh(access)).status).toBe(401);

  const out = await cliLogout(login.body.refreshToken);
  expect(out.status).toBe(200);
  expect(out.body).toEqual({ success: true });
  expect((await cliRefresh(login.body.refreshToken)).status).toBe(401);
  expect((await app.request('GET', '/api/v1/projects', { token: access })).status).toBe(401);
  // Always 200, whatever is sent.
  for (const t of [login.body.refreshToken, 'garbage']) expect((await cliLogout(t)).body).toEqual({ success: true });
  expect((await app.request('POST', '/api/v1/device-logout')).status).toBe(200);
});

test('revoking the device in the key list refuses its access tokens at once', async () => {
  const { b } = await signedIn();
  const { code } = (await b.request('POST', '/api/v1/device-codes')).body.data;
  const login = await cliLogin(`${code.slice(0, 3)}-${code.slice(3)}`, { client: 'specstory-desktop', hostname: 'studio' });
  expect(login.status).toBe(200);
  const access = (await cliRefresh(login.body.refreshToken)).body.accessToken;
  expect((await app.request('GET', '/api/v1/projects', { token: access })).status).toBe(200);
  const keys = (await b.request('GET', '/api/v1/keys')).body.data.keys;
  const dev = keys.find((k: any) => k.name === 'specstory-desktop on studio');
  expect((await b.request('DELETE', `/api/v1/keys/${dev.id}`)).status).toBe(200);
  expect((await app.request('GET', '/api/v1/projects', { token: access })).status).toBe(401);
  expect((await cliRefresh(login.body.refreshToken)).status).toBe(401);
});

test('a code works once; unknown, expired and malformed codes get the exact messages', async () => {
  const { b } = await signedIn();
  const { code } = (await b.request('POST', '/api/v1/device-codes')).body.data;
  expect((await cliLogin(code)).status).toBe(200);
  const twice = await cliLogin(code);
  expect(twice.status).toBe(401);
  expect(twice.body).toEqual({ success: false, error: 'Device code has already been used' });

  for (const bad of ['ZZZZZZ', 'abc', '!!!!!!']) {
    const r = await cliLogin(bad);
    expect(r.status).toBe(401);
    expect(r.body).toEqual({ success: false, error: 'Invalid or expired device code' });
  }

  const old = (await b.request('POST', '/api/v1/device-codes')).body.data.code;
  await app.deps.db.pool.query('UPDATE device_codes SET expiresAt = ? WHERE userId = (SELECT id FROM users WHERE email = ?) AND usedAt IS NULL', [
    new Date(Date.now() - 1000),
    (await b.request('GET', '/api/v1/auth/session')).body.data.user.email,
  ]);
  const expired = await cliLogin(old);
  expect(expired.status).toBe(401);
  expect(expired.body).toEqual({ success: false, error: 'Invalid or expired device code' });
});

test('a missing device_code → 400; other fields are optional', async () => {
  for (const body of [{}, { hostname: 'x' }, { device_code: '' }]) {
    const r = await app.request('POST', '/api/v1/device-login', { body });
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ success: false, error: 'Missing required field: device_code' });
  }
  const { b } = await signedIn();
  const { code } = (await b.request('POST', '/api/v1/device-codes')).body.data;
  const r = await app.request('POST', '/api/v1/device-login', { body: { device_code: code } });
  expect(r.status).toBe(200);
  expect(typeof r.body.refreshToken).toBe('string');
});

test('concurrent exchanges of one code: exactly one refresh token', async () => {
  const { b } = await signedIn();
  const { code } = (await b.request('POST', '/api/v1/device-codes')).body.data;
  const results = await Promise.all(Array.from({ length: 5 }, () => cliLogin(code)));
  expect(results.filter((r) => r.status === 200)).toHaveLength(1);
  expect(results.filter((r) => r.status === 401)).toHaveLength(4);
});

test('failed device logins and refreshes count against the per-address limit', async () => {
  const limited = await startTestApp({ db: app.db, env: { AUTH_FAILURE_LIMIT: '3' } });
  try {
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) {
      statuses.push((await limited.request('POST', '/api/v1/device-login', { body: { device_code: 'ZZZ999' } })).status);
      statuses.push((await limited.request('POST', '/api/v1/device-refresh', { token: 'bad.token.here' })).status);
    }
    expect(statuses.slice(0, 3)).toEqual([401, 401, 401]);
    expect(statuses.slice(4)).toEqual([429, 429]);
  } finally {
    await limited.close();
  }
});
