/**
 * Bounded unauthenticated work: first-run setup that never holds the database, limits on
 * successful sign-ins, the browser-session cap, sign-up per address, METRICS_TOKEN guesses and
 * the service-wide budget of failed device logins. Addresses other than 127.0.0.1 come through
 * X-Forwarded-For (TRUST_PROXY defaults to loopback, so the test client is a trusted proxy).
 */
import crypto from 'node:crypto';
import { createUser } from '../../src/services/users';
import { operatorCtx } from '../../src/services/context';
import { sha256 } from '../../src/domain/tokens';
import { startTestApp, type TestApp, type TestResponse } from '../support/app';
import { browser, sessionCookieOf } from '../support/cookie-client';

const PASSWORD = 'correct horse battery';
let seq = 0;
const email = (p: string) => `${p}-${process.pid}-${++seq}@example.test`;
const from = (ip: string) => ({ 'X-Forwarded-For': ip });
const RATE_LIMITED = /^Rate limit exceeded\. Try again in \d+ seconds\.$/;

function expect429(r: TestResponse): void {
  expect(r.status).toBe(429);
  expect(r.body).toEqual({ success: false, error: expect.stringMatching(RATE_LIMITED) });
  expect(Number(r.headers['retry-after'])).toBeGreaterThan(0);
}

const count = async (app: TestApp, sql: string, params: unknown[] = []) => Number((await app.deps.db.pool.query(sql, params))[0].n);

describe('first-run setup', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(() => app?.close());

  test('concurrent attempts on a fresh service: one account, the others 409 at once', async () => {
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        app.request('POST', '/api/v1/auth/setup', { body: { email: `first-${i}@example.test`, name: 'First', password: PASSWORD } }),
      ),
    );
    expect(results.filter((r) => r.status === 201)).toHaveLength(1);
    expect(results.filter((r) => r.status === 409)).toHaveLength(5);
    expect(await count(app, 'SELECT COUNT(*) n FROM users')).toBe(1);
  });

  test('after the first account, a burst of anonymous setups never holds the database: 409/429, no 503, uploads and /readyz unharmed', async () => {
    const victim = await app.createUser('victim');
    const upload = (n: number) =>
      app.request('PUT', `/api/v1/projects/victim-proj/sessions/${crypto.randomUUID()}`, {
        token: victim.token,
        body: { name: `victim ${n}`, markdown: `# victim ${n}\n\n${'text '.repeat(200)}` },
      });
    const t0 = Date.now();
    expect((await upload(0)).status).toBe(201);
    const baselineMs = Date.now() - t0;

    const setup = (i: number) => app.request('POST', '/api/v1/auth/setup', { body: { email: `burst-${i}@example.test`, name: 'B', password: PASSWORD } });
    // Twice the pool's connections from one address, with the victim's upload and a readiness
    // probe in the middle of it.
    const burst = Array.from({ length: 20 }, (_, i) => setup(i));
    const t1 = Date.now();
    const [victimUpload, ready] = await Promise.all([upload(1), app.request('GET', '/readyz')]);
    const victimMs = Date.now() - t1;
    const answers = await Promise.all(burst);

    expect(answers.map((r) => r.status).filter((s) => s !== 409 && s !== 429)).toEqual([]);
    for (const r of answers.filter((a) => a.status === 409)) expect(r.body).toEqual({ success: false, error: 'An account already exists; sign in instead' });
    expect(victimUpload.status).toBe(201);
    expect(ready.status).toBe(200);
    expect((await app.request('GET', '/readyz')).status).toBe(200);
    expect(await count(app, "SELECT COUNT(*) n FROM users WHERE email LIKE 'burst-%'")).toBe(0);
    // For the record (not asserted: timings belong to bench/): the victim against its own baseline.
    process.stdout.write(`setup burst: victim upload ${victimMs} ms (baseline ${baselineMs} ms)\n`);

    // Even a malformed body gets the 409 once the service is set up (nothing is read or checked).
    const bad = await app.request('POST', '/api/v1/auth/setup', { body: { email: 'x' }, headers: from('10.9.0.1') });
    expect(bad.status).toBe(409);
  });

  test('past ANONYMOUS_REQUESTS_PER_MINUTE an address gets 429 before its request is looked at; another address does not', async () => {
    const limited = await startTestApp({ db: app.db, env: { ANONYMOUS_REQUESTS_PER_MINUTE: '5' } });
    try {
      const ip = '10.9.1.1';
      const doors = [
        () => limited.request('POST', '/api/v1/auth/setup', { body: {}, headers: from(ip) }),
        () => limited.request('POST', '/api/v1/auth/sign-in', { body: {}, headers: from(ip) }),
        () => limited.request('POST', '/api/v1/auth/sign-up', { body: {}, headers: from(ip) }),
        () => limited.request('POST', '/api/v1/auth/reset-password', { body: {}, headers: from(ip) }),
        () => limited.request('POST', '/api/v1/device-login', { body: {}, headers: from(ip) }),
      ];
      const first = [];
      for (const door of doors) first.push((await door()).status);
      expect(first).toEqual([409, 400, 403, 400, 400]);
      for (const door of doors) expect429(await door());
      const other = await limited.request('POST', '/api/v1/auth/sign-in', { body: {}, headers: from('10.9.1.2') });
      expect(other.status).toBe(400);
      // /metrics counts these refusals under their own kind, not as failed authentications.
      const metrics = (await limited.request('GET', '/metrics', { headers: from('10.9.1.3') })).text;
      const rejections = (kind: string) => Number(new RegExp(`^rate_limit_rejections_total\\{kind="${kind}"\\} (\\d+)$`, 'm').exec(metrics)?.[1] ?? 0);
      expect(rejections('anonymous')).toBe(doors.length);
      expect(rejections('auth_failure')).toBe(0);
    } finally {
      await limited.close();
    }
  });
});

describe('successful sign-ins and browser sessions', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(() => app?.close());

  const member = async (prefix: string) => {
    const e = email(prefix);
    const u = await createUser(operatorCtx(app.deps.db), e, prefix, { password: PASSWORD });
    return { id: u.id, email: e };
  };
  const signIn = (a: TestApp, who: { email: string }, ip: string) =>
    a.request('POST', '/api/v1/auth/sign-in', { body: { email: who.email, password: PASSWORD }, headers: from(ip) });

  test('30 per account per 15 minutes (from any addresses), then 429 without a session', async () => {
    const u = await member('acct');
    for (let i = 0; i < 30; i++) expect((await signIn(app, u, `10.1.0.${i + 1}`)).status).toBe(200);
    const r = await signIn(app, { email: u.email.toUpperCase() }, '10.1.1.1');
    expect429(r);
    expect(sessionCookieOf(r)).toBeNull();
    expect(await count(app, 'SELECT COUNT(*) n FROM user_sessions WHERE userId = ?', [u.id])).toBe(30);
    // Another account is not affected.
    expect((await signIn(app, await member('acct-other'), '10.1.1.1')).status).toBe(200);
  });

  test('30 per address per 15 minutes (over any accounts), then 429; another address is not affected', async () => {
    const users = [await member('addr'), await member('addr'), await member('addr')];
    for (let i = 0; i < 30; i++) expect((await signIn(app, users[i % 3], '10.2.0.1')).status).toBe(200);
    const fresh = await member('addr-fresh');
    expect429(await signIn(app, fresh, '10.2.0.1'));
    expect((await signIn(app, fresh, '10.2.0.2')).status).toBe(200);
  });

  test('a user holds at most 100 browser sessions: the oldest ends first', async () => {
    const u = await member('cap');
    const oldest = sessionCookieOf(await signIn(app, u, '10.3.0.1'))!.value!;
    await app.deps.db.pool.query('UPDATE user_sessions SET createdAt = NOW(3) - INTERVAL 2 DAY WHERE tokenHash = ?', [sha256(oldest)]);
    // 99 more sessions, younger than the first and older than the next sign-in.
    const rows = Array.from({ length: 99 }, (_, i) => [sha256(`cap-${seq}-${i}`), u.id, `csrf-${i}`, 99 - i]);
    for (const row of rows) {
      await app.deps.db.pool.query(
        'INSERT INTO user_sessions (tokenHash, userId, csrfToken, createdAt, lastUsedAt) VALUES (?, ?, ?, NOW(3) - INTERVAL ? MINUTE, NOW(3))',
        row,
      );
    }
    expect(await count(app, 'SELECT COUNT(*) n FROM user_sessions WHERE userId = ?', [u.id])).toBe(100);
    expect((await app.request('GET', '/api/v1/auth/session', { headers: { Cookie: `sa_session=${oldest}` } })).status).toBe(200);

    const newest = sessionCookieOf(await signIn(app, u, '10.3.0.2'))!.value!;
    expect(await count(app, 'SELECT COUNT(*) n FROM user_sessions WHERE userId = ?', [u.id])).toBe(100);
    expect((await app.request('GET', '/api/v1/auth/session', { headers: { Cookie: `sa_session=${oldest}` } })).status).toBe(401);
    expect((await app.request('GET', '/api/v1/auth/session', { headers: { Cookie: `sa_session=${newest}` } })).status).toBe(200);
    // The next one ends the oldest of those left (the one made 99 minutes ago).
    await signIn(app, u, '10.3.0.3');
    expect(await count(app, 'SELECT COUNT(*) n FROM user_sessions WHERE tokenHash = ?', [rows[0][0]])).toBe(0);
    expect(await count(app, 'SELECT COUNT(*) n FROM user_sessions WHERE tokenHash = ?', [rows[1][0]])).toBe(1);
  });

  test('BROWSER_SESSIONS_PER_USER sets the cap', async () => {
    const small = await startTestApp({ db: app.db, env: { BROWSER_SESSIONS_PER_USER: '2' } });
    try {
      const u = await member('cap2');
      const cookies: string[] = [];
      for (let i = 0; i < 3; i++) {
        cookies.push(sessionCookieOf(await signIn(small, u, '10.3.1.1'))!.value!);
        // Distinct creation times: the order of ending is by creation.
        await new Promise((r) => setTimeout(r, 5));
      }
      const status = async (c: string) => (await small.request('GET', '/api/v1/auth/session', { headers: { Cookie: `sa_session=${c}` } })).status;
      expect([await status(cookies[0]), await status(cookies[1]), await status(cookies[2])]).toEqual([401, 200, 200]);
    } finally {
      await small.close();
    }
  });
});

describe('sign-up', () => {
  test('10 per address per hour, then 429 (and no account); another address may still sign up', async () => {
    const app = await startTestApp({ env: { SIGNUP_ENABLED: 'true' } });
    try {
      const up = (e: string, ip: string) =>
        app.request('POST', '/api/v1/auth/sign-up', { body: { email: e, name: 'N', password: PASSWORD }, headers: from(ip) });
      for (let i = 0; i < 10; i++) expect((await up(email('up'), '10.5.0.1')).status).toBe(201);
      const refused = email('up-refused');
      expect429(await up(refused, '10.5.0.1'));
      expect(await count(app, 'SELECT COUNT(*) n FROM users WHERE email = ?', [refused])).toBe(0);
      expect((await up(email('up-other'), '10.5.0.2')).status).toBe(201);
      // A malformed attempt is a 400 and costs nothing of the sign-up budget.
      const bad = await app.request('POST', '/api/v1/auth/sign-up', { body: { email: email('x'), name: 'N', password: 'short' }, headers: from('10.5.0.3') });
      expect(bad.status).toBe(400);
    } finally {
      await app.close();
    }
  });
});

describe('METRICS_TOKEN', () => {
  test('wrong tokens count against the failed-authentication limit of the address', async () => {
    const token = 'the-right-metrics-token';
    const app = await startTestApp({ env: { METRICS_TOKEN: token, AUTH_FAILURE_LIMIT: '5' } });
    try {
      const scrape = (t: string, ip: string) => app.request('GET', '/metrics', { headers: { Authorization: `Bearer ${t}`, ...from(ip) } });
      for (let i = 0; i < 5; i++) expect((await scrape(`guess-${i}-guess-guess`, '10.6.0.1')).status).toBe(401);
      expect429(await scrape('guess-6-guess-guess', '10.6.0.1'));
      // Now even the right token from that address, and a bad API key from it, are refused.
      expect429(await scrape(token, '10.6.0.1'));
      expect429(await app.request('GET', '/api/v1/projects', { token: 'bad.api.key', headers: from('10.6.0.1') }));
      expect((await scrape(token, '10.6.0.2')).status).toBe(200);
    } finally {
      await app.close();
    }
  });
});

describe('device login', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(() => app?.close());

  const codeFor = async () => {
    const e = email('dev');
    await createUser(operatorCtx(app.deps.db), e, 'Dev', { password: PASSWORD });
    const b = browser(app);
    expect((await b.signIn(e, PASSWORD)).status).toBe(200);
    const r = await b.request('POST', '/api/v1/device-codes');
    expect(r.status).toBe(201);
    return r.body.data.code as string;
  };
  const login = (code: string, ip: string) =>
    app.request('POST', '/api/v1/device-login', { body: { device_code: code, client: 'cli', hostname: 'h' }, headers: from(ip) });

  test('a code lives exactly 10 minutes and works once', async () => {
    const code = await codeFor();
    const [row] = await app.deps.db.pool.query('SELECT createdAt, expiresAt FROM device_codes WHERE codeHash = ?', [sha256(code)]);
    expect(row.expiresAt.getTime() - row.createdAt.getTime()).toBe(10 * 60_000);
    // A second before its end it still works; spent, it never works again.
    await app.deps.db.pool.query('UPDATE device_codes SET expiresAt = NOW(3) + INTERVAL 1 SECOND WHERE codeHash = ?', [sha256(code)]);
    expect((await login(code, '10.7.0.1')).status).toBe(200);
    const again = await login(code, '10.7.0.2');
    expect(again.status).toBe(401);
    expect(again.body).toEqual({ success: false, error: 'Device code has already been used' });
    const late = await codeFor();
    await app.deps.db.pool.query('UPDATE device_codes SET expiresAt = NOW(3) - INTERVAL 1 SECOND WHERE codeHash = ?', [sha256(late)]);
    expect((await login(late, '10.7.0.3')).body).toEqual({ success: false, error: 'Invalid or expired device code' });
  });

  test('failed device logins have a service-wide budget (100 per 10 minutes): beyond it every address gets 429', async () => {
    const code = await codeFor();
    // An instance of its own: the budget counts from zero.
    const fresh = await startTestApp({ db: app.db });
    try {
      const at = (c: string, ip: string) => fresh.request('POST', '/api/v1/device-login', { body: { device_code: c }, headers: from(ip) });
      // 100 wrong guesses, each from an address of its own (no per-address limit is reached).
      for (let batch = 0; batch < 10; batch++) {
        const rs = await Promise.all(Array.from({ length: 10 }, (_, i) => at('ZZZ999', `10.8.${batch}.${i + 1}`)));
        for (const r of rs) expect(r.status).toBe(401);
      }
      // Now a right code from a fresh address is refused too, and stays unspent.
      const r = await at(code, '10.8.100.1');
      expect429(r);
      expect(Number(r.headers['retry-after'])).toBeLessThanOrEqual(600);
      expect429(await at('YYY888', '10.8.100.2'));
      const [row] = await app.deps.db.pool.query('SELECT usedAt FROM device_codes WHERE codeHash = ?', [sha256(code)]);
      expect(row.usedAt).toBeNull();
    } finally {
      await fresh.close();
    }
  });
});
