import { sha256 } from '../../src/domain/tokens';
import { createUser } from '../../src/services/users';
import { operatorCtx } from '../../src/services/context';
import { startTestApp, type TestApp } from '../support/app';
import { browser, sessionCookieOf } from '../support/cookie-client';
import { eventually } from '../support/eventually';

let app: TestApp;
const PASSWORD = 'correct horse battery';
let seq = 0;
const email = (p: string) => `${p}-${process.pid}-${++seq}@example.test`;

beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app?.close());

/** A user with a password (and, through the harness, nothing else). */
async function member(prefix = 'm', role: 'admin' | 'member' = 'member') {
  const e = email(prefix);
  const u = await createUser(operatorCtx(app.deps.db), e, prefix, { password: PASSWORD, role });
  return { ...u, email: e };
}

const count = async (sql: string, params: unknown[] = []) => Number((await app.deps.db.pool.query(sql, params))[0].n);

describe('first run', () => {
  test('while no user exists, setup creates the first account as admin and signs it in; then it is closed', async () => {
    const before = await app.request('GET', '/api/v1/auth/setup');
    expect(before.status).toBe(200);
    expect(before.body).toEqual({ success: true, data: { needsSetup: true, signupEnabled: false } });

    const b = browser(app);
    const bad = await b.request('POST', '/api/v1/auth/setup', { body: { email: 'first@example.test', name: 'First', password: 'short' } });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatch(/password/);

    const r = await b.request('POST', '/api/v1/auth/setup', { body: { email: 'first@example.test', name: 'First', password: PASSWORD } });
    expect(r.status).toBe(201);
    expect(r.body.data.user).toEqual({ id: expect.any(String), email: 'first@example.test', name: 'First', role: 'admin' });
    expect(b.cookie).toBeTruthy();
    const s = await b.request('GET', '/api/v1/auth/session');
    expect(s.status).toBe(200);
    expect(s.body.data.user.role).toBe('admin');

    const again = await browser(app).request('POST', '/api/v1/auth/setup', { body: { email: 'second@example.test', name: 'S', password: PASSWORD } });
    expect(again.status).toBe(409);
    expect(await count('SELECT COUNT(*) n FROM users')).toBe(1);
    expect((await app.request('GET', '/api/v1/auth/setup')).body.data.needsSetup).toBe(false);
    // The password is stored as an argon2id hash, never as given.
    const [row] = await app.deps.db.pool.query('SELECT passwordHash FROM users WHERE email = ?', ['first@example.test']);
    expect(row.passwordHash).toMatch(/^\$argon2id\$/);
    expect(row.passwordHash).not.toContain(PASSWORD);
  });
});

describe('sign-in, session, sign-out', () => {
  test('sign-in answers the user and sets sa_session (HttpOnly, SameSite=Lax, Path=/); session gives user and csrfToken', async () => {
    const u = await member('si');
    const r = await app.request('POST', '/api/v1/auth/sign-in', { body: { email: u.email, password: PASSWORD } });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ success: true, data: { user: { id: u.id, email: u.email, name: 'si', role: 'member' } } });
    const c = sessionCookieOf(r)!;
    expect(c.value!.length).toBeGreaterThanOrEqual(22); // ≥ 128 bits in base64url
    expect(c.attributes).toMatch(/HttpOnly/);
    expect(c.attributes).toMatch(/SameSite=Lax/);
    expect(c.attributes).toMatch(/Path=\//);
    expect(c.attributes).not.toMatch(/Secure/); // plain HTTP without COOKIE_SECURE

    // Stored only as a hash.
    expect(await count('SELECT COUNT(*) n FROM user_sessions WHERE tokenHash = ?', [c.value])).toBe(0);
    expect(await count('SELECT COUNT(*) n FROM user_sessions WHERE tokenHash = ?', [sha256(c.value!)])).toBe(1);

    const s = await app.request('GET', '/api/v1/auth/session', { headers: { Cookie: `sa_session=${c.value}` } });
    expect(s.status).toBe(200);
    expect(s.body.data).toEqual({ user: { id: u.id, email: u.email, name: 'si', role: 'member' }, csrfToken: expect.any(String) });

    const out = await app.request('POST', '/api/v1/auth/sign-out', {
      headers: { Cookie: `sa_session=${c.value}`, 'X-CSRF-Token': s.body.data.csrfToken },
    });
    expect(out.status).toBe(200);
    expect(out.body).toEqual({ success: true, data: {} });
    const after = await app.request('GET', '/api/v1/auth/session', { headers: { Cookie: `sa_session=${c.value}` } });
    expect(after.status).toBe(401);
    expect(await count('SELECT COUNT(*) n FROM user_sessions WHERE tokenHash = ?', [sha256(c.value!)])).toBe(0);
  });

  test('COOKIE_SECURE=true marks the cookie Secure', async () => {
    const other = await startTestApp({ db: app.db, env: { COOKIE_SECURE: 'true' } });
    try {
      const u = await member('sec');
      const r = await other.request('POST', '/api/v1/auth/sign-in', { body: { email: u.email, password: PASSWORD } });
      expect(r.status).toBe(200);
      expect(sessionCookieOf(r)!.attributes).toMatch(/Secure/);
    } finally {
      await other.close();
    }
  });

  test('unknown email and wrong password get the same 401 and no cookie', async () => {
    const u = await member('enum');
    const wrong = await app.request('POST', '/api/v1/auth/sign-in', { body: { email: u.email, password: 'not the password' } });
    const unknown = await app.request('POST', '/api/v1/auth/sign-in', { body: { email: email('nobody'), password: 'not the password' } });
    for (const r of [wrong, unknown]) {
      expect(r.status).toBe(401);
      expect(r.body).toEqual({ success: false, error: 'Invalid email or password' });
      expect(sessionCookieOf(r)).toBeNull();
    }
    expect(
      Object.keys(wrong.headers)
        .filter((h) => !['date', 'x-request-id', 'etag'].includes(h))
        .sort(),
    ).toEqual(
      Object.keys(unknown.headers)
        .filter((h) => !['date', 'x-request-id', 'etag'].includes(h))
        .sort(),
    );
    // A user without a password (made by the old CLI) cannot sign in either, with the same answer.
    const nopw = await createUser(operatorCtx(app.deps.db), email('nopw'));
    const r = await app.request('POST', '/api/v1/auth/sign-in', { body: { email: nopw.email, password: 'whatever it is' } });
    expect(r.body).toEqual({ success: false, error: 'Invalid email or password' });
  });

  test('sign-in validation → 400', async () => {
    for (const body of [{}, { email: 'a@b.c' }, { password: 'x' }, { email: 5, password: 'x' }, []]) {
      const r = await app.request('POST', '/api/v1/auth/sign-in', { body });
      expect(r.status).toBe(400);
      expect(r.body.success).toBe(false);
    }
  });

  test('10 failed sign-ins per account per 15 minutes, then 429 even with the right password', async () => {
    const u = await member('lock');
    for (let i = 0; i < 10; i++) {
      const r = await app.request('POST', '/api/v1/auth/sign-in', { body: { email: u.email, password: `wrong password ${i}` } });
      expect(r.status).toBe(401);
    }
    const r = await app.request('POST', '/api/v1/auth/sign-in', { body: { email: u.email.toUpperCase(), password: PASSWORD } });
    expect(r.status).toBe(429);
    expect(r.body.error).toMatch(/^Rate limit exceeded\. Try again in \d+ seconds\.$/);
    expect(Number(r.headers['retry-after'])).toBeGreaterThan(0);
    expect(sessionCookieOf(r)).toBeNull();
    // Another account from the same address is not affected.
    const v = await member('free');
    expect((await app.request('POST', '/api/v1/auth/sign-in', { body: { email: v.email, password: PASSWORD } })).status).toBe(200);
  });

  test('failed sign-ins count against the per-address limit', async () => {
    const limited = await startTestApp({ db: app.db, env: { AUTH_FAILURE_LIMIT: '3' } });
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 5; i++) {
        const r = await limited.request('POST', '/api/v1/auth/sign-in', { body: { email: email(`addr${i}`), password: 'wrong password' } });
        statuses.push(r.status);
      }
      expect(statuses.slice(0, 3)).toEqual([401, 401, 401]);
      expect(statuses[4]).toBe(429);
    } finally {
      await limited.close();
    }
  });

  test('a session unused for 30 days has expired', async () => {
    const u = await member('idle');
    const b = browser(app);
    expect((await b.signIn(u.email, PASSWORD)).status).toBe(200);
    expect((await b.request('GET', '/api/v1/projects')).status).toBe(200);
    await app.deps.db.pool.query('UPDATE user_sessions SET lastUsedAt = ? WHERE userId = ?', [new Date(Date.now() - 30 * 86_400_000 - 1000), u.id]);
    expect((await b.request('GET', '/api/v1/projects')).status).toBe(401);
    expect((await b.request('GET', '/api/v1/auth/session')).status).toBe(401);
  });

  test('a session used within 30 days lives on', async () => {
    const u = await member('alive');
    const b = browser(app);
    await b.signIn(u.email, PASSWORD);
    await app.deps.db.pool.query('UPDATE user_sessions SET lastUsedAt = ? WHERE userId = ?', [new Date(Date.now() - 29 * 86_400_000), u.id]);
    expect((await b.request('GET', '/api/v1/projects')).status).toBe(200);
    // Use was recorded (waited for: the bookkeeping write does not hold the request).
    const lastUsed = async () =>
      ((await app.deps.db.pool.query('SELECT lastUsedAt FROM user_sessions WHERE userId = ?', [u.id]))[0].lastUsedAt as Date).getTime();
    await eventually('the use to be recorded', async () => Date.now() - (await lastUsed()) < 86_400_000, 5_000);
    expect(Date.now() - (await lastUsed())).toBeLessThan(86_400_000);
  });
});

describe('cookie-authenticated API calls and CSRF', () => {
  const PROJECT = { id: 'csrf-proj', name: 'CSRF' };

  test('GET with the cookie works without a CSRF token; writes need it', async () => {
    const u = await member('ck');
    const b = browser(app);
    await b.signIn(u.email, PASSWORD);
    const list = await b.request('GET', '/api/v1/projects');
    expect(list.status).toBe(200);
    expect(list.headers['x-ratelimit-limit']).toBe('1000');

    const created = await b.request('POST', '/api/v1/projects', { body: { ...PROJECT, id: `ok-${u.id.slice(0, 8)}` } });
    expect(created.status).toBe(201);
    expect(created.body.data.project.id).toBe(`ok-${u.id.slice(0, 8)}`);
  });

  test('missing token, wrong token, foreign Origin → 403 Invalid CSRF token, and nothing is written (REST)', async () => {
    const u = await member('csrf');
    const b = browser(app);
    await b.signIn(u.email, PASSWORD);
    const own = app.url;
    const attempts: Array<{ headers?: Record<string, string>; csrf?: boolean }> = [
      { csrf: false },
      { csrf: false, headers: { 'X-CSRF-Token': 'not-the-token' } },
      { headers: { Origin: 'https://evil.example' } },
      { csrf: false, headers: { Origin: own } },
    ];
    for (const a of attempts) {
      for (const [method, path, body] of [
        ['POST', '/api/v1/projects', PROJECT],
        ['PUT', `/api/v1/projects/${PROJECT.id}/sessions/0e6a2d7c-1111-4222-8333-444455556666`, { name: 'x', markdown: '# x' }],
        ['POST', '/api/v1/keys', { name: 'stolen' }],
        ['POST', '/api/v1/auth/sign-out-everywhere', undefined],
      ] as const) {
        const r = await b.request(method, path, { body, headers: a.headers, csrf: a.csrf });
        expect({ path, status: r.status, body: r.body }).toEqual({ path, status: 403, body: { success: false, error: 'Invalid CSRF token' } });
      }
    }
    expect(await count('SELECT COUNT(*) n FROM projects WHERE ownerId = ?', [u.id])).toBe(0);
    expect(await count('SELECT COUNT(*) n FROM api_keys WHERE userId = ?', [u.id])).toBe(0);
    expect(await count('SELECT COUNT(*) n FROM user_sessions WHERE userId = ?', [u.id])).toBe(1);
    // With the right token and its own Origin the same write succeeds.
    const okr = await b.request('POST', '/api/v1/projects', { body: PROJECT, headers: { Origin: own } });
    expect(okr.status).toBe(201);
  });

  test('GraphQL with the cookie: queries need no token; mutations without it → 403 and nothing written', async () => {
    const u = await member('gq');
    const b = browser(app);
    await b.signIn(u.email, PASSWORD);
    const q = await b.request('POST', '/api/v1/graphql', { body: { query: '{ projects { id } }' }, csrf: false });
    expect(q.status).toBe(403);
    expect(q.body.errors[0]).toEqual({ message: 'Invalid CSRF token', extensions: { code: 'FORBIDDEN' } });
    const mutation = { query: 'mutation { createProject(input: {id: "gq-proj", name: "G"}) { id } }' };
    for (const headers of [{}, { 'X-CSRF-Token': 'wrong' }] as Array<Record<string, string>>) {
      const r = await b.request('POST', '/api/v1/graphql', { body: mutation, csrf: false, headers });
      expect(r.status).toBe(403);
    }
    const foreign = await b.request('POST', '/api/v1/graphql', { body: mutation, headers: { Origin: 'http://attacker.test' } });
    expect(foreign.status).toBe(403);
    expect(await count('SELECT COUNT(*) n FROM projects WHERE ownerId = ?', [u.id])).toBe(0);

    const okr = await b.request('POST', '/api/v1/graphql', { body: mutation });
    expect(okr.status).toBe(200);
    expect(okr.body.data.createProject.id).toBe('gq-proj');
    expect(okr.headers['x-ratelimit-limit']).toBe('500');
  });

  test('Bearer requests need no CSRF token, and a bad cookie is not consulted when a Bearer header is sent', async () => {
    const u = await app.createUser('bearer');
    const r = await app.request('POST', '/api/v1/projects', {
      token: u.token,
      body: { id: 'bearer-p', name: 'B' },
      headers: { Cookie: 'sa_session=garbage', Origin: 'https://evil.example' },
    });
    expect(r.status).toBe(201);
  });

  test('cookie and key requests share one rate-limit budget per user', async () => {
    const limited = await startTestApp({ db: app.db, env: { RATE_LIMIT_REST_PER_HOUR: '4' } });
    try {
      const u = await member('rl');
      const { token } = await limited.newKey(u);
      const b = browser(limited);
      expect((await b.signIn(u.email, PASSWORD)).status).toBe(200);
      const statuses: number[] = [];
      for (let i = 0; i < 3; i++) {
        statuses.push((await b.request('GET', '/api/v1/projects')).status);
        statuses.push((await limited.request('GET', '/api/v1/projects', { token })).status);
      }
      expect(statuses.slice(0, 4)).toEqual([200, 200, 200, 200]);
      expect(statuses.slice(4)).toEqual([429, 429]);
    } finally {
      await limited.close();
    }
  });
});

describe('account: password change, sign out everywhere, reset links', () => {
  test('a password change ends every other session of the user and keeps this one', async () => {
    const u = await member('pw');
    const b1 = browser(app);
    const b2 = browser(app);
    await b1.signIn(u.email, PASSWORD);
    await b2.signIn(u.email, PASSWORD);
    const wrong = await b1.request('POST', '/api/v1/auth/password', { body: { currentPassword: 'not it at all', newPassword: 'a new password' } });
    expect(wrong.status).toBe(403);
    const short = await b1.request('POST', '/api/v1/auth/password', { body: { currentPassword: PASSWORD, newPassword: 'short' } });
    expect(short.status).toBe(400);
    const r = await b1.request('POST', '/api/v1/auth/password', { body: { currentPassword: PASSWORD, newPassword: 'a new password' } });
    expect(r.status).toBe(200);
    expect((await b1.request('GET', '/api/v1/auth/session')).status).toBe(200);
    expect((await b2.request('GET', '/api/v1/auth/session')).status).toBe(401);
    expect((await browser(app).signIn(u.email, PASSWORD)).status).toBe(401);
    expect((await browser(app).signIn(u.email, 'a new password')).status).toBe(200);
  });

  test('sign out everywhere ends all browser sessions; keys keep working', async () => {
    const u = await member('everywhere');
    const { token } = await app.newKey(u);
    const b1 = browser(app);
    const b2 = browser(app);
    await b1.signIn(u.email, PASSWORD);
    await b2.signIn(u.email, PASSWORD);
    const r = await b1.request('POST', '/api/v1/auth/sign-out-everywhere');
    expect(r.status).toBe(200);
    expect((await b1.request('GET', '/api/v1/projects')).status).toBe(401);
    expect((await b2.request('GET', '/api/v1/projects')).status).toBe(401);
    expect((await app.request('GET', '/api/v1/projects', { token })).status).toBe(200);
  });

  test('a reset link sets a new password once, ends all sessions, and expires after an hour', async () => {
    const admin = await member('adm', 'admin');
    const u = await member('reset');
    const a = browser(app);
    await a.signIn(admin.email, PASSWORD);
    const victim = browser(app);
    await victim.signIn(u.email, PASSWORD);

    const link = await a.request('POST', `/api/v1/users/${u.id}/reset-password`);
    expect(link.status).toBe(200);
    expect(link.body.data.link).toMatch(new RegExp(`^${app.url}/reset-password\\?token=[A-Za-z0-9_-]{40,}$`));
    expect(Date.parse(link.body.data.expiresAt) - Date.now()).toBeGreaterThan(59 * 60_000);
    const token = new URL(link.body.data.link).searchParams.get('token');
    expect(await count('SELECT COUNT(*) n FROM password_resets WHERE tokenHash = ?', [token])).toBe(0);

    const used = await app.request('POST', '/api/v1/auth/reset-password', { body: { token, password: 'reset password 1' } });
    expect(used.status).toBe(200);
    expect((await victim.request('GET', '/api/v1/auth/session')).status).toBe(401);
    expect((await browser(app).signIn(u.email, 'reset password 1')).status).toBe(200);

    const twice = await app.request('POST', '/api/v1/auth/reset-password', { body: { token, password: 'reset password 2' } });
    expect(twice.status).toBe(400);
    expect(twice.body.error).toBe('Invalid or expired reset link');
    expect((await browser(app).signIn(u.email, 'reset password 2')).status).toBe(401);

    const old = await a.request('POST', `/api/v1/users/${u.id}/reset-password`);
    const oldToken = new URL(old.body.data.link).searchParams.get('token');
    await app.deps.db.pool.query('UPDATE password_resets SET expiresAt = ? WHERE tokenHash = ?', [new Date(Date.now() - 1000), sha256(oldToken!)]);
    const expired = await app.request('POST', '/api/v1/auth/reset-password', { body: { token: oldToken, password: 'reset password 3' } });
    expect(expired.status).toBe(400);
    expect(expired.body.error).toBe('Invalid or expired reset link');
  });
});

describe('the Users page (admins)', () => {
  test('members get 403; admins list, create (with a link to set a password), disable and enable', async () => {
    const admin = await member('boss', 'admin');
    const plain = await member('plain');
    const m = browser(app);
    await m.signIn(plain.email, PASSWORD);
    expect((await m.request('GET', '/api/v1/users')).status).toBe(403);
    expect((await m.request('POST', '/api/v1/users', { body: { email: email('x'), name: 'X' } })).status).toBe(403);

    const a = browser(app);
    await a.signIn(admin.email, PASSWORD);
    const list = await a.request('GET', '/api/v1/users');
    expect(list.status).toBe(200);
    const mine = list.body.data.users.find((x: any) => x.id === admin.id);
    expect(mine).toEqual({ id: admin.id, email: admin.email, name: 'boss', role: 'admin', createdAt: expect.any(String), disabledAt: null });
    expect(list.body.data.total).toBe(list.body.data.users.length);
    expect(list.text).not.toMatch(/argon2|passwordHash/);

    const newEmail = email('made');
    const created = await a.request('POST', '/api/v1/users', { body: { email: newEmail, name: 'Made', role: 'member' } });
    expect(created.status).toBe(201);
    expect(created.body.data.user).toMatchObject({ email: newEmail, name: 'Made', role: 'member', disabledAt: null });
    expect(created.body.data.link).toMatch(/\/reset-password\?token=/);
    const dup = await a.request('POST', '/api/v1/users', { body: { email: newEmail } });
    expect(dup.status).toBe(409);
    expect((await a.request('POST', '/api/v1/users', { body: { email: 'not-an-email' } })).status).toBe(400);
    expect((await a.request('POST', '/api/v1/users', { body: { email: email('r'), role: 'root' } })).status).toBe(400);

    expect((await a.request('POST', `/api/v1/users/${admin.id}/disable`)).status).toBe(400);
    expect((await a.request('POST', '/api/v1/users/no-such-user/disable')).status).toBe(404);
  });

  test('disabling a user stops their keys, device tokens and browser sessions at once; enabling restores keys', async () => {
    const admin = await member('boss2', 'admin');
    const u = await member('victim');
    const { token } = await app.newKey(u);
    const ub = browser(app);
    await ub.signIn(u.email, PASSWORD);
    // A device token too.
    const code = await ub.request('POST', '/api/v1/device-codes');
    const login = await app.request('POST', '/api/v1/device-login', { body: { device_code: code.body.data.code } });
    const access = await app.request('POST', '/api/v1/device-refresh', { token: login.body.refreshToken });
    expect(access.status).toBe(200);
    for (const t of [token, access.body.accessToken]) expect((await app.request('GET', '/api/v1/projects', { token: t })).status).toBe(200);

    const a = browser(app);
    await a.signIn(admin.email, PASSWORD);
    const r = await a.request('POST', `/api/v1/users/${u.id}/disable`);
    expect(r.status).toBe(200);
    expect(r.body.data.user.disabledAt).toEqual(expect.any(String));

    for (const t of [token, access.body.accessToken]) expect((await app.request('GET', '/api/v1/projects', { token: t })).status).toBe(401);
    expect((await app.request('POST', '/api/v1/device-refresh', { token: login.body.refreshToken })).status).toBe(401);
    expect((await ub.request('GET', '/api/v1/projects')).status).toBe(401);
    expect((await browser(app).signIn(u.email, PASSWORD)).status).toBe(401);
    expect(await count('SELECT COUNT(*) n FROM user_sessions WHERE userId = ?', [u.id])).toBe(0);

    expect((await a.request('POST', `/api/v1/users/${u.id}/enable`)).status).toBe(200);
    expect((await app.request('GET', '/api/v1/projects', { token })).status).toBe(200);
    expect((await browser(app).signIn(u.email, PASSWORD)).status).toBe(200);
  });
});

describe('sign-up', () => {
  test('off by default (403); with SIGNUP_ENABLED=true a member account is created and signed in', async () => {
    const off = await app.request('POST', '/api/v1/auth/sign-up', { body: { email: email('su'), name: 'S', password: PASSWORD } });
    expect(off.status).toBe(403);
    const on = await startTestApp({ db: app.db, env: { SIGNUP_ENABLED: 'true' } });
    try {
      expect((await on.request('GET', '/api/v1/auth/setup')).body.data.signupEnabled).toBe(true);
      const r = await on.request('POST', '/api/v1/auth/sign-up', { body: { email: email('su'), name: 'S', password: PASSWORD } });
      expect(r.status).toBe(201);
      expect(r.body.data.user.role).toBe('member');
      expect(sessionCookieOf(r)?.value).toBeTruthy();
    } finally {
      await on.close();
    }
  });
});
