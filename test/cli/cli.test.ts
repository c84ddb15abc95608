import { connectionOptions } from '../../src/db/client';
import { SID, startTestApp, type TestApp } from '../support/app';
import { runCli, type CliResult } from '../support/cli';
import { testConnection } from '../support/connection';
import { createTestDatabase, uncreatedTestDatabase, type TestDatabase } from '../support/db';
import { testMeiliEnv } from '../support/meili-engine';

let db: TestDatabase;
let app: TestApp;

function cli(...args: string[]): Promise<CliResult> {
  return runCli(args, { databaseUrl: db.url });
}

function cliWith(env: Record<string, string>, ...args: string[]): Promise<CliResult> {
  return runCli(args, { databaseUrl: db.url, env });
}

function cliWithInput(input: string | undefined, ...args: string[]): Promise<CliResult> {
  return runCli(args, { databaseUrl: db.url, input });
}

const lines = (s: string) => s.split('\n').filter((l) => l.length > 0);
const lastLine = (s: string) => {
  const l = lines(s);
  return l[l.length - 1];
};

beforeAll(async () => {
  db = await createTestDatabase('sa_cli');
  app = await startTestApp({ db });
});
afterAll(async () => {
  await app.close();
  await db.drop();
});

describe('users and keys', () => {
  const email = 'cli-user@example.test';
  let token: string;
  let keyId: string;

  test('users create', async () => {
    const r = await cli('users', 'create', '--email', email, '--name', 'Cli User');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(email);
    const [u] = await app.deps.db.pool.query('SELECT id, name FROM users WHERE email = ?', [email]);
    expect(u.name).toBe('Cli User');
  });

  test('users create --admin --password-stdin: an admin who can sign in; a short password is refused', async () => {
    const adminEmail = 'cli-admin@example.test';
    const r = await cliWithInput('a long enough password\n', 'users', 'create', '--email', adminEmail, '--name', 'Admin', '--admin', '--password-stdin');
    expect(r.code).toBe(0);
    const [u] = await app.deps.db.pool.query('SELECT role, passwordHash FROM users WHERE email = ?', [adminEmail]);
    expect(u.role).toBe('admin');
    expect(u.passwordHash).toMatch(/^\$argon2id\$/);
    const signIn = await app.request('POST', '/api/v1/auth/sign-in', { body: { email: adminEmail, password: 'a long enough password' } });
    expect(signIn.status).toBe(200);
    expect(signIn.body.data.user.role).toBe('admin');

    const short = await cliWithInput('short\n', 'users', 'create', '--email', 'cli-short@example.test', '--password-stdin');
    expect(short.code).not.toBe(0);
    expect(lines(short.stderr)).toHaveLength(1);
    expect(short.stderr).toMatch(/password/);
    const [none] = await app.deps.db.pool.query('SELECT COUNT(*) n FROM users WHERE email = ?', ['cli-short@example.test']);
    expect(Number(none.n)).toBe(0);
  });

  test("the Quick start: users create prints a set-password link on the service's address last; setting that first password keeps the key made meanwhile", async () => {
    const quick = 'cli-quick@example.test';
    const made = await cliWith({ HOST: '127.0.0.1', PORT: '4123' }, 'users', 'create', '--email', quick, '--name', 'Quick');
    expect(made.code).toBe(0);
    const link = lastLine(made.stdout);
    expect(link).toMatch(/^http:\/\/127\.0\.0\.1:4123\/reset-password\?token=[A-Za-z0-9_-]{40,}$/);
    const key = await cli('keys', 'create', '--email', quick, '--name', 'laptop');
    const keyToken = lastLine(key.stdout);
    const asKey = () => app.request('GET', '/api/v1/projects', { token: keyToken });
    expect((await asKey()).status).toBe(200);
    // The reset page sends its checkbox (checked by default): a first password still revokes nothing.
    const token = new URL(link).searchParams.get('token');
    const set = await app.request('POST', '/api/v1/auth/reset-password', { body: { token, password: 'my first password', revokeCredentials: true } });
    expect(set.status).toBe(200);
    expect((await app.request('POST', '/api/v1/auth/sign-in', { body: { email: quick, password: 'my first password' } })).status).toBe(200);
    expect((await asKey()).status).toBe(200);
    // A later reset of a password that existed does revoke, as the checkbox says.
    const again = lastLine((await cli('users', 'reset-password', '--email', quick)).stdout);
    const reset = await app.request('POST', '/api/v1/auth/reset-password', {
      body: { token: new URL(again).searchParams.get('token'), password: 'my second password' },
    });
    expect(reset.status).toBe(200);
    expect((await asKey()).status).toBe(401);
    // PUBLIC_URL, when set, is the links' base.
    const pub = await cliWith({ PUBLIC_URL: 'https://archive.example.test' }, 'users', 'create', '--email', 'cli-public@example.test');
    expect(lastLine(pub.stdout)).toMatch(/^https:\/\/archive\.example\.test\/reset-password\?token=/);
  });

  test('users reset-password prints a one-time link valid one hour; unknown email → one stderr line', async () => {
    const r = await cli('users', 'reset-password', '--email', email);
    expect(r.code).toBe(0);
    const link = lastLine(r.stdout);
    expect(link).toMatch(/^http:\/\/127\.0\.0\.1:3000\/reset-password\?token=[A-Za-z0-9_-]{40,}$/);
    const token = new URL(link).searchParams.get('token');
    const set = await app.request('POST', '/api/v1/auth/reset-password', { body: { token, password: 'set by a link' } });
    expect(set.status).toBe(200);
    expect((await app.request('POST', '/api/v1/auth/sign-in', { body: { email, password: 'set by a link' } })).status).toBe(200);
    expect((await app.request('POST', '/api/v1/auth/reset-password', { body: { token, password: 'set by a link again' } })).status).toBe(400);

    const unknown = await cli('users', 'reset-password', '--email', 'nobody@example.test');
    expect(unknown.code).not.toBe(0);
    expect(lines(unknown.stderr)).toHaveLength(1);
  });

  test('a DATABASE_URL naming no existing database: the first command creates it and says so on stderr, the next one does not', async () => {
    const fresh = uncreatedTestDatabase('sa_cli_new');
    try {
      const first = await runCli(['users', 'create', '--email', 'cli-fresh@example.test'], { databaseUrl: fresh.url });
      expect(first.code).toBe(0);
      expect(lines(first.stderr)).toEqual([
        `note: database ${fresh.name} did not exist: created it (empty)`,
        expect.stringMatching(/^note: applied \d+ migrations \(the last: \w+\)$/),
      ]);
      const again = await runCli(['users', 'create', '--email', 'cli-fresh-2@example.test'], { databaseUrl: fresh.url });
      expect(again.code).toBe(0);
      expect(again.stderr).toBe('');
      // A migration file changed after it was applied: every command warns, once per such file.
      const conn = await testConnection(connectionOptions(fresh.url));
      let name: string;
      try {
        [{ name }] = await conn.query('SELECT migration_name AS name FROM _prisma_migrations ORDER BY migration_name LIMIT 1');
        await conn.query("UPDATE _prisma_migrations SET checksum = 'edited' WHERE migration_name = ?", [name]);
      } finally {
        await conn.end();
      }
      const warned = await runCli(['users', 'create', '--email', 'cli-fresh-3@example.test'], { databaseUrl: fresh.url });
      expect(warned.code).toBe(0);
      expect(lines(warned.stderr)).toEqual([`warning: migration ${name} was modified after it was applied`]);
    } finally {
      await fresh.drop();
    }
  });

  test('users create with an existing email → one stderr line, non-zero', async () => {
    const r = await cli('users', 'create', '--email', email);
    expect(r.code).not.toBe(0);
    expect(lines(r.stderr)).toHaveLength(1);
  });

  test('keys create: token alone on the last line of stdout; it authenticates', async () => {
    const r = await cli('keys', 'create', '--email', email, '--name', 'ci');
    expect(r.code).toBe(0);
    token = lastLine(r.stdout);
    expect(token).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    const res = await app.request('GET', '/api/v1/keys', { token });
    expect(res.status).toBe(200);
    const key = res.body.data.keys.find((k: any) => k.name === 'ci');
    expect(key).toBeDefined();
    expect(key.expiresAt).toBeNull();
    keyId = key.id;
    const put = await app.request('PUT', '/api/v1/projects/cli-p/sessions/0e6a2d7c-1111-4222-8333-444455556666', { token, body: { name: 's', markdown: 'm' } });
    expect(put.status).toBe(201);
  });

  test('keys create --expires-in-days', async () => {
    const t0 = Date.now();
    const r = await cli('keys', 'create', '--email', email, '--name', 'short', '--expires-in-days', '7');
    expect(r.code).toBe(0);
    const t = lastLine(r.stdout);
    const res = await app.request('GET', '/api/v1/keys', { token: t });
    expect(res.status).toBe(200);
    const key = res.body.data.keys.find((k: any) => k.name === 'short');
    expect(Math.abs(Date.parse(key.expiresAt) - (t0 + 7 * 86_400_000))).toBeLessThan(120_000);
    for (const name of ['', 'x'.repeat(101)]) {
      const b = await cli('keys', 'create', '--email', email, '--name', name);
      expect(b.code).not.toBe(0);
      expect(lines(b.stderr)).toHaveLength(1);
      expect(b.stdout).toBe('');
    }
    for (const bad of ['0', '3651', 'abc', '1.5']) {
      const b = await cli('keys', 'create', '--email', email, '--expires-in-days', bad);
      expect(b.code).not.toBe(0);
      expect(lines(b.stderr)).toHaveLength(1);
    }
  });

  test('keys list: one key per line, id first', async () => {
    const r = await cli('keys', 'list', '--email', email);
    expect(r.code).toBe(0);
    const ids = (await app.deps.db.pool.query('SELECT k.id FROM api_keys k JOIN users u ON u.id = k.userId WHERE u.email = ?', [email])).map((x: any) => x.id);
    const out = lines(r.stdout);
    expect(out).toHaveLength(ids.length);
    expect(out.map((l) => l.split(/\s+/)[0]).sort()).toEqual([...ids].sort());
    expect(r.stdout).not.toContain(token);
  });

  test('keys revoke KEY_ID: the token is refused afterwards', async () => {
    const r = await cli('keys', 'revoke', keyId);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(keyId);
    const res = await app.request('GET', '/api/v1/projects', { token });
    expect(res).toMatchObject({ status: 401, body: { success: false, error: 'Invalid session token' } });
    const list = await cli('keys', 'list', '--email', email);
    expect(lines(list.stdout).find((l) => l.startsWith(keyId))).toMatch(/revoked/);
  });
});

describe('--help', () => {
  test('prints every command, or those of the group named, and exits 0 without touching the database', async () => {
    const all = await runCli(['--help'], { databaseUrl: 'mysql://nobody@127.0.0.1:1/none' });
    expect(all.code).toBe(0);
    expect(lines(all.stdout)[0]).toBe('usage:');
    expect(all.stdout).toContain('npm run cli -- usage recompute [--after PROJECT/SESSION] [--batch N]');
    expect(all.stdout).toContain('npm run cli -- import-remote --from URL');
    const users = await runCli(['users', '--help'], { databaseUrl: 'mysql://nobody@127.0.0.1:1/none' });
    expect(users.code).toBe(0);
    expect(lines(users.stdout)).toHaveLength(3);
    expect(users.stdout).toContain('npm run cli -- users reset-password --email E    (prints a one-time link, valid 1 hour)');
    expect((await runCli(['help', 'keys'], { databaseUrl: 'mysql://nobody@127.0.0.1:1/none' })).stdout).toContain('keys revoke KEY_ID');
  });
});

describe('errors: one line on stderr, non-zero exit', () => {
  test.each([
    [[]],
    [['users']],
    [['bogus', 'thing']],
    [['keys', 'explode']],
    [['users', 'create']],
    [['users', 'create', '--email']],
    [['users', 'create', '--email', 'x@example.test', '--wat', '1']],
    [['keys', 'create', '--email', 'nobody@example.test']],
    [['keys', 'list', '--email', 'nobody@example.test']],
    [['keys', 'revoke', 'no-such-key']],
    [['keys', 'revoke']],
    [['redact', 'rescan', 'extra']],
    [['keys', 'list', '--dry-run']],
  ])('%j', async (args) => {
    const r = await cli(...args);
    expect(r.code).not.toBe(0);
    expect(lines(r.stderr)).toHaveLength(1);
    expect(r.stdout).toBe('');
  });
});

describe('redact rescan', () => {
  const SESSION = SID(1899);
  const token = `ghp_${'a1B2c3D4e5'.repeat(3)}Zz9Yy8`;

  test('--dry-run counts; then the stored secret is masked, with progress, findings and a moved ETag', async () => {
    // Stored before redaction existed (REDACT_SECRETS=off), by the same user as the CLI's app.
    const off = await startTestApp({ db, env: { REDACT_SECRETS: 'off' } });
    let etag: string;
    let u: Awaited<ReturnType<TestApp['createUser']>>;
    try {
      u = await off.createUser('rescan');
      const put = await off.request('PUT', `/api/v1/projects/rescan/sessions/${SESSION}`, {
        token: u.token,
        body: { name: 'Old session', markdown: `# Notes\n\nexport GITHUB_TOKEN=${token}\n`, rawData: JSON.stringify({ text: `use ${token}` }) },
      });
      expect(put.status).toBe(201);
      etag = put.body.data.etag;
    } finally {
      await off.close();
    }
    const search: Record<string, string> = process.env.MEILI_URL
      ? { MEILI_URL: process.env.MEILI_URL, MEILI_MASTER_KEY: process.env.MEILI_MASTER_KEY ?? '' }
      : {};

    const dry = await cliWith(search, 'redact', 'rescan', '--dry-run');
    expect(dry.code).toBe(0);
    expect(dry.stdout).toMatch(/^rescan: \d+\/\d+ sessions \(\d+%\)/m);
    expect(lastLine(dry.stdout)).toMatch(/^rescan complete: \d+ sessions scanned, would change 1 \(github-token: 2\)$/);
    const still = await app.request('GET', `/api/v1/projects/rescan/sessions/${SESSION}`, { token: u.token });
    expect(still.body.data.session.markdownContent).toContain(token);

    const run = await cliWith(search, 'redact', 'rescan');
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^rescan complete: \d+ sessions scanned, redacted 1 \(github-token: 2\)$/m);
    const after = await app.request('GET', `/api/v1/projects/rescan/sessions/${SESSION}`, { token: u.token });
    expect(after.text).not.toContain(token);
    expect(after.body.data.session.redactions).toEqual([{ rule: 'github-token', count: 2 }]);
    expect(after.body.data.session.etag).not.toBe(etag);
    const raw = await app.request('GET', `/api/v1/projects/rescan/sessions/${SESSION}/raw`, { token: u.token });
    expect(JSON.parse(raw.text).text).toMatch(/^use \[REDACTED:github-token\]\*+$/);
  });
});

describe('search reindex', () => {
  test('rebuilds the index from the database: a line per percent with its pace, then how many sessions', async () => {
    const u = await app.createUser('reindex');
    const put = await app.request('PUT', `/api/v1/projects/reindex/sessions/${SID(1900)}`, {
      token: u.token,
      body: { name: 'Reindexed', markdown: '# Reindexed\n' },
    });
    expect(put.status).toBe(201);
    const sessions = Number((await app.deps.db.pool.query('SELECT COUNT(*) AS n FROM sessions'))[0].n);
    const r = await cliWith(testMeiliEnv(), 'search', 'reindex');
    expect(r.code).toBe(0);
    const progress = lines(r.stdout).filter((l) => l.startsWith('reindex: '));
    expect(progress[0]).toMatch(/^reindex: 0\/\d+ sessions \(0%\)$/);
    // The last: everything done, at the pace measured, nothing left.
    expect(progress[progress.length - 1]).toMatch(/^reindex: (\d+)\/\1 sessions \(100%\), [\d.]+ sessions\/s, 0s left$/);
    expect(lastLine(r.stdout)).toMatch(new RegExp(`^reindex complete: ${sessions} sessions indexed into \\S+$`));
  });
});

describe('search outbox-retry', () => {
  test('moves dead-lettered index work back into the outbox: one row by id, then all', async () => {
    const pool = app.deps.db.pool;
    const rows = [9_100_001, 9_100_002, 9_100_003];
    for (const id of rows) {
      await pool.query(
        "INSERT INTO search_outbox_dead (id, op, userId, projectId, sessionId, attempts, createdAt, lastError) VALUES (?, 'delete_project', 'nobody', 'gone-project', NULL, 10, NOW(3), 'engine down')",
        [id],
      );
    }
    const dead = async () => Number((await pool.query('SELECT COUNT(*) AS n FROM search_outbox_dead'))[0].n);
    const one = await cli('search', 'outbox-retry', String(rows[0]));
    expect(one).toMatchObject({ code: 0, stdout: 'requeued 1 search outbox row\n' });
    expect(await dead()).toBe(2);
    const rest = await cli('search', 'outbox-retry');
    expect(rest).toMatchObject({ code: 0, stdout: 'requeued 2 search outbox rows\n' });
    expect(await dead()).toBe(0);
    const none = await cli('search', 'outbox-retry', '424242');
    expect(none).toMatchObject({ code: 0, stdout: 'requeued 0 search outbox rows\n' });
  });
});
