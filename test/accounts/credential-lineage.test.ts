/**
 * Credentials never outlive their source. A /cli-login code remembers the key or device access
 * token that asked for it; the device token it is exchanged for expires no later than that key
 * (or that access token: an hour, not its device session's ten years) and is revoked with it (or
 * with its device session). A key minted with a device access token expires no later than that
 * access token and is revoked when the device logs out. A code asked for in the console keeps the
 * device session's ten years. All of it at any depth,
 * from the next request on, on every instance. A password change or reset revokes keys and device
 * tokens unless asked not to.
 */
import jwt from 'jsonwebtoken';
import { insertDerivedKey } from '../../src/services/keys';
import { operatorCtx } from '../../src/services/context';
import { createUser } from '../../src/services/users';
import { startTestApp, type TestApp } from '../support/app';
import { browser } from '../support/cookie-client';

let app: TestApp;
const PASSWORD = 'correct horse battery';
const NEW_PASSWORD = 'a brand new password';
const DAY = 86_400_000;
const HOUR = 3_600_000;
let seq = 0;

beforeAll(async () => {
  app = await startTestApp({ rateLimit: false });
}, 60_000);
afterAll(() => app?.close());

/** A user with a password and a 1-day key (the source of most lineages here). */
async function person(prefix: string) {
  const email = `${prefix}-${process.pid}-${++seq}@example.test`;
  const u = await createUser(operatorCtx(app.deps.db), email, prefix, { password: PASSWORD });
  const key = await app.newKey(u, 'one day', 1);
  return { id: u.id, email, key };
}

const status = async (token: string) => (await app.request('GET', '/api/v1/projects', { token })).status;
const statuses = (tokens: string[]) => Promise.all(tokens.map(status));

/** A /cli-login code asked for with a Bearer credential (a key or a device access token). */
async function codeWith(token: string): Promise<string> {
  const r = await app.request('POST', '/api/v1/device-codes', { token });
  expect(r.status).toBe(201);
  return r.body.data.code;
}

interface Device {
  id: string;
  refreshToken: string;
  accessToken: string;
  expiresAt: number;
  /** When the access token ends (ms): its `exp`, as the service checks it. */
  accessExpiresAt: number;
}

/** The upload CLI's login with `code`, then its first refresh. */
async function deviceLogin(code: string, hostname: string): Promise<Device> {
  const login = await app.request('POST', '/api/v1/device-login', { body: { device_code: code, client: 'specstory-cli', hostname } });
  expect(login.status).toBe(200);
  const refresh = await app.request('POST', '/api/v1/device-refresh', { token: login.body.refreshToken });
  expect(refresh.status).toBe(200);
  const id = (jwt.decode(login.body.refreshToken) as { jti: string }).jti;
  const accessExpiresAt = (jwt.decode(refresh.body.accessToken) as { exp: number }).exp * 1000;
  expect(accessExpiresAt).toBeLessThanOrEqual(Date.parse(refresh.body.expiresAt));
  return { id, refreshToken: login.body.refreshToken, accessToken: refresh.body.accessToken, expiresAt: Date.parse(login.body.expiresAt), accessExpiresAt };
}

const refreshStatus = async (d: Device) => (await app.request('POST', '/api/v1/device-refresh', { token: d.refreshToken })).status;
const logout = (d: Device) => app.request('POST', '/api/v1/device-logout', { token: d.refreshToken });

async function mint(token: string, body: Record<string, unknown> = { name: 'minted' }) {
  const r = await app.request('POST', '/api/v1/keys', { token, body });
  expect(r.status).toBe(201);
  return { token: r.body.data.token as string, id: r.body.data.key.id as string, expiresAt: r.body.data.key.expiresAt as string | null };
}

async function row(id: string): Promise<{ expiresAt: Date | null; revokedAt: Date | null; parentKeyId: string | null }> {
  const [r] = await app.deps.db.pool.query('SELECT expiresAt, revokedAt, parentKeyId FROM api_keys WHERE id = ?', [id]);
  return r;
}

test('key → code → device token: expires no later than the key, and is revoked with it', async () => {
  const u = await person('key-code');
  const keyExpiry = (await row(u.key.keyId)).expiresAt!.getTime();
  expect(keyExpiry - Date.now()).toBeLessThanOrEqual(DAY);

  const d = await deviceLogin(await codeWith(u.key.token), 'from-key');
  expect(d.expiresAt).toBeLessThanOrEqual(keyExpiry);
  expect((jwt.decode(d.refreshToken) as { exp: number }).exp * 1000).toBeLessThanOrEqual(keyExpiry);
  expect((await row(d.id)).parentKeyId).toBe(u.key.keyId);
  const listed = (await app.request('GET', '/api/v1/keys', { token: u.key.token })).body.data.keys.find((k: { id: string }) => k.id === d.id);
  expect(Date.parse(listed.expiresAt)).toBeLessThanOrEqual(keyExpiry);
  expect(await status(d.accessToken)).toBe(200);

  expect((await app.request('DELETE', `/api/v1/keys/${u.key.keyId}`, { token: u.key.token })).status).toBe(200);
  expect(await refreshStatus(d)).toBe(401);
  expect(await status(d.accessToken)).toBe(401);
  expect((await row(d.id)).revokedAt).not.toBeNull();
});

test('a code asked for with a key that is revoked before the login gives nothing', async () => {
  const u = await person('key-code-late');
  const code = await codeWith(u.key.token);
  expect((await app.request('DELETE', `/api/v1/keys/${u.key.keyId}`, { token: u.key.token })).status).toBe(200);
  const login = await app.request('POST', '/api/v1/device-login', { body: { device_code: code, client: 'c', hostname: 'h' } });
  expect(login.status).toBe(401);
  expect(login.body).toEqual({ success: false, error: 'Invalid or expired device code' });
  const [{ n }] = await app.deps.db.pool.query('SELECT COUNT(*) n FROM api_keys WHERE userId = ? AND kind = ?', [u.id, 'device']);
  expect(Number(n)).toBe(0);
});

test('device access token → code → device token: revoked when the first device logs out, at any depth', async () => {
  const u = await person('dev-code');
  const b = browser(app);
  expect((await b.signIn(u.email, PASSWORD)).status).toBe(200);
  const first = await deviceLogin((await b.request('POST', '/api/v1/device-codes')).body.data.code, 'first');
  // Asked for in the console: a device session of its own, 10 years.
  expect(first.expiresAt - Date.now()).toBeGreaterThan(9 * 365 * DAY);

  const second = await deviceLogin(await codeWith(first.accessToken), 'second');
  const third = await deviceLogin(await codeWith(second.accessToken), 'third');
  expect((await row(second.id)).parentKeyId).toBe(first.id);
  // Asked for with an access token: no later than that token (an hour), not its ten-year session.
  expect(first.accessExpiresAt - Date.now()).toBeLessThanOrEqual(HOUR);
  expect(second.expiresAt).toBeLessThanOrEqual(first.accessExpiresAt);
  expect((await row(second.id)).expiresAt!.getTime()).toBeLessThanOrEqual(first.accessExpiresAt);
  expect((jwt.decode(second.refreshToken) as { exp: number }).exp * 1000).toBeLessThanOrEqual(first.accessExpiresAt);
  expect(second.accessExpiresAt).toBeLessThanOrEqual(first.accessExpiresAt);
  expect(third.expiresAt).toBeLessThanOrEqual(second.accessExpiresAt);
  expect(await statuses([second.accessToken, third.accessToken])).toEqual([200, 200]);

  expect((await logout(first)).status).toBe(200);
  expect(await statuses([first.accessToken, second.accessToken, third.accessToken])).toEqual([401, 401, 401]);
  expect([await refreshStatus(second), await refreshStatus(third)]).toEqual([401, 401]);
  // The browser session that asked for the first code is not a credential the devices derive from.
  expect((await b.request('GET', '/api/v1/projects')).status).toBe(200);
  expect(await status(u.key.token)).toBe(200);
});

test('device access token → key: expires no later than that access token, revoked on device logout', async () => {
  const u = await person('dev-key');
  const d = await deviceLogin(await codeWith(u.key.token), 'laptop');

  const minted = await mint(d.accessToken, { name: 'no expiry asked' });
  expect(minted.expiresAt).not.toBeNull();
  expect(Date.parse(minted.expiresAt!)).toBeLessThanOrEqual(d.accessExpiresAt);
  expect((await row(minted.id)).expiresAt!.getTime()).toBeLessThanOrEqual(d.accessExpiresAt);
  expect((jwt.decode(minted.token) as { exp: number }).exp * 1000).toBeLessThanOrEqual(d.accessExpiresAt);
  expect((await row(minted.id)).parentKeyId).toBe(d.id);
  const grandchild = await mint(minted.token, { name: 'grandchild', expiresInDays: 3650 });
  expect(Date.parse(grandchild.expiresAt!)).toBeLessThanOrEqual(d.accessExpiresAt);

  // A device whose session came from the console: its access tokens still live an hour, and so
  // does what they mint, however long the session.
  const b = browser(app);
  await b.signIn(u.email, PASSWORD);
  const other = await deviceLogin((await b.request('POST', '/api/v1/device-codes')).body.data.code, 'desktop');
  expect(other.expiresAt - Date.now()).toBeGreaterThan(9 * 365 * DAY);
  const fromOther = await mint(other.accessToken, { name: 'from desktop', expiresInDays: 3650 });
  expect(Date.parse(fromOther.expiresAt!)).toBeLessThanOrEqual(other.accessExpiresAt);
  expect(other.accessExpiresAt - Date.now()).toBeLessThanOrEqual(HOUR);

  expect(await statuses([minted.token, grandchild.token, fromOther.token])).toEqual([200, 200, 200]);
  expect((await logout(d)).status).toBe(200);
  expect(await statuses([d.accessToken, minted.token, grandchild.token])).toEqual([401, 401, 401]);
  // Only that device's lineage: the other device, its key and the source key stay.
  expect(await statuses([other.accessToken, fromOther.token, u.key.token])).toEqual([200, 200, 200]);
  expect((await logout(other)).status).toBe(200);
  expect(await status(fromOther.token)).toBe(401);
});

test('revoking the root key revokes the whole tree, from the next request on, on another instance too', async () => {
  const u = await person('tree');
  const other = await startTestApp({ db: app.db, rateLimit: false });
  try {
    const d1 = await deviceLogin(await codeWith(u.key.token), 'd1');
    const k1 = await mint(d1.accessToken);
    const d2 = await deviceLogin(await codeWith(k1.token), 'd2');
    const k2 = await mint(d2.accessToken);
    const keyExpiry = (await row(u.key.keyId)).expiresAt!.getTime();
    for (const id of [d1.id, k1.id, d2.id, k2.id]) expect((await row(id)).expiresAt!.getTime()).toBeLessThanOrEqual(keyExpiry);
    const tokens = [d1.accessToken, k1.token, d2.accessToken, k2.token];
    const onOther = (t: string) => other.request('GET', '/api/v1/projects', { token: t }).then((r) => r.status);
    expect(await Promise.all(tokens.map(onOther))).toEqual([200, 200, 200, 200]);

    expect((await app.request('DELETE', `/api/v1/keys/${u.key.keyId}`, { token: u.key.token })).status).toBe(200);
    expect(await Promise.all(tokens.map(onOther))).toEqual([401, 401, 401, 401]);
    expect(await statuses(tokens)).toEqual([401, 401, 401, 401]);
    expect([await refreshStatus(d1), await refreshStatus(d2)]).toEqual([401, 401]);
  } finally {
    await other.close();
  }
});

test('a credential cannot be derived from a source revoked before or while it is made; nothing live is left behind', async () => {
  const u = await person('race');
  const writes = app.deps.db.writes;
  const draft = () => ({
    id: `race-${process.pid}-${++seq}`,
    userId: u.id,
    name: 'late',
    createdAt: new Date(),
    lastUsedAt: null,
    expiresAt: null,
    revokedAt: null,
    parentKeyId: null,
    kind: 'key',
    scopes: 'read,write',
  });
  const liveChildren = async () =>
    Number((await app.deps.db.pool.query('SELECT COUNT(*) n FROM api_keys WHERE parentKeyId = ? AND revokedAt IS NULL', [u.key.keyId]))[0].n);

  // The source is revoked (and its lineage walked) right after the child's row is inserted, before
  // the child is returned: the creation notices and takes the child down.
  let revokedBetween = false;
  const racing: typeof writes = {
    ...writes,
    query: (sql, ...values) => writes.query(sql, ...values),
    execute: async (sql, ...values) => {
      const n = await writes.execute(sql, ...values);
      if (!revokedBetween && sql.startsWith('INSERT INTO api_keys')) {
        revokedBetween = true;
        expect((await app.request('DELETE', `/api/v1/keys/${u.key.keyId}`, { token: u.key.token })).status).toBe(200);
      }
      return n;
    },
  };
  expect(await insertDerivedKey(racing, draft(), u.key.keyId)).toBeNull();
  expect(revokedBetween).toBe(true);
  expect(await liveChildren()).toBe(0);

  // Revoked before: nothing is inserted at all.
  expect(await insertDerivedKey(writes, draft(), u.key.keyId)).toBeNull();
  expect(await liveChildren()).toBe(0);
});

test('a disabled user: every credential of every lineage stops at once, and no new one can be derived', async () => {
  const u = await person('disable');
  const admin = await createUser(operatorCtx(app.deps.db), `admin-${process.pid}-${++seq}@example.test`, 'admin', { password: PASSWORD, role: 'admin' });
  const d1 = await deviceLogin(await codeWith(u.key.token), 'd1');
  const k1 = await mint(d1.accessToken);
  const d2 = await deviceLogin(await codeWith(k1.token), 'd2');
  const pending = await codeWith(d2.accessToken);
  const tokens = [u.key.token, d1.accessToken, k1.token, d2.accessToken];
  expect(await statuses(tokens)).toEqual([200, 200, 200, 200]);

  const a = browser(app);
  await a.signIn(admin.email, PASSWORD);
  expect((await a.request('POST', `/api/v1/users/${u.id}/disable`)).status).toBe(200);
  expect(await statuses(tokens)).toEqual([401, 401, 401, 401]);
  expect([await refreshStatus(d1), await refreshStatus(d2)]).toEqual([401, 401]);
  expect((await app.request('POST', '/api/v1/device-login', { body: { device_code: pending } })).status).toBe(401);
  expect((await app.request('POST', '/api/v1/keys', { token: k1.token, body: { name: 'while disabled' } })).status).toBe(401);
});

describe('a new password revokes keys and device tokens unless asked not to', () => {
  /** A user with a key, a device (from the key's code), a key minted by the device, and a device from the console. */
  async function credentials(prefix: string) {
    const u = await person(prefix);
    const free = await app.newKey(u, 'no expiry');
    const d = await deviceLogin(await codeWith(u.key.token), 'cli');
    const k = await mint(d.accessToken);
    const b = browser(app);
    await b.signIn(u.email, PASSWORD);
    const desktop = await deviceLogin((await b.request('POST', '/api/v1/device-codes')).body.data.code, 'desktop');
    return { u, b, tokens: [u.key.token, free.token, d.accessToken, k.token, desktop.accessToken], devices: [d, desktop] };
  }

  test('password change: revokeCredentials defaults to true', async () => {
    const c = await credentials('pw-default');
    const r = await c.b.request('POST', '/api/v1/auth/password', { body: { currentPassword: PASSWORD, newPassword: NEW_PASSWORD } });
    expect(r.status).toBe(200);
    expect(await statuses(c.tokens)).toEqual([401, 401, 401, 401, 401]);
    expect(await Promise.all(c.devices.map(refreshStatus))).toEqual([401, 401]);
    // The browser session making the change stays, and can make new keys.
    expect((await c.b.request('POST', '/api/v1/keys', { body: { name: 'after' } })).status).toBe(201);
  });

  test('password change with revokeCredentials: false keeps them; a non-boolean is a 400', async () => {
    const c = await credentials('pw-keep');
    const bad = await c.b.request('POST', '/api/v1/auth/password', { body: { currentPassword: PASSWORD, newPassword: NEW_PASSWORD, revokeCredentials: 'no' } });
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ success: false, error: 'Invalid value for revokeCredentials. Must be a boolean' });
    const r = await c.b.request('POST', '/api/v1/auth/password', { body: { currentPassword: PASSWORD, newPassword: NEW_PASSWORD, revokeCredentials: false } });
    expect(r.status).toBe(200);
    expect(await statuses(c.tokens)).toEqual([200, 200, 200, 200, 200]);
    expect(await Promise.all(c.devices.map(refreshStatus))).toEqual([200, 200]);
  });

  async function resetLink(userId: string): Promise<string> {
    const admin = await createUser(operatorCtx(app.deps.db), `reset-admin-${process.pid}-${++seq}@example.test`, 'admin', {
      password: PASSWORD,
      role: 'admin',
    });
    const a = browser(app);
    await a.signIn(admin.email, PASSWORD);
    const link = await a.request('POST', `/api/v1/users/${userId}/reset-password`);
    expect(link.status).toBe(200);
    return new URL(link.body.data.link).searchParams.get('token')!;
  }

  test('password reset: revokeCredentials defaults to true', async () => {
    const c = await credentials('reset-default');
    const r = await app.request('POST', '/api/v1/auth/reset-password', { body: { token: await resetLink(c.u.id), password: NEW_PASSWORD } });
    expect(r.status).toBe(200);
    expect(await statuses(c.tokens)).toEqual([401, 401, 401, 401, 401]);
    expect(await Promise.all(c.devices.map(refreshStatus))).toEqual([401, 401]);
  });

  test('password reset with revokeCredentials: false keeps them (browser sessions still end)', async () => {
    const c = await credentials('reset-keep');
    const r = await app.request('POST', '/api/v1/auth/reset-password', {
      body: { token: await resetLink(c.u.id), password: NEW_PASSWORD, revokeCredentials: false },
    });
    expect(r.status).toBe(200);
    expect(await statuses(c.tokens)).toEqual([200, 200, 200, 200, 200]);
    expect(await Promise.all(c.devices.map(refreshStatus))).toEqual([200, 200]);
    expect((await c.b.request('GET', '/api/v1/projects')).status).toBe(401);
  });
});
