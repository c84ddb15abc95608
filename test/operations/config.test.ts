import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ConfigError, loadConfig } from '../../src/config';

// Every folder made here is removed after the file's tests, passed or failed.
const made: string[] = [];
const tmp = () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sa-config-'));
  made.push(dir);
  return dir;
};
afterAll(() => {
  for (const dir of made) fs.rmSync(dir, { recursive: true, force: true });
});
const base = () => ({ DATA_DIR: tmp(), JWT_SECRET: 'a-secret-of-sufficient-length' });

function problemsOf(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return (e as ConfigError).problems;
  }
  throw new Error('expected a ConfigError');
}

test('defaults', () => {
  const dir = tmp();
  const c = loadConfig({ DATA_DIR: dir });
  expect(c).toMatchObject({
    nodeEnv: 'development',
    port: 3000,
    host: '127.0.0.1',
    databaseUrl: 'mysql://root@127.0.0.1:3306/session_archive',
    databaseName: 'session_archive',
    meiliUrl: null,
    meiliMasterKey: null,
    redisUrl: null,
    rateLimitRestPerHour: 1000,
    rateLimitGraphqlPerHour: 500,
    authFailureLimit: 300,
    maxBodyBytes: 50 * 1024 * 1024,
    logLevel: 'info',
    metricsEnabled: true,
    namespace: 'session_archive',
    dataDir: path.resolve(dir),
  });
  // JWT_SECRET outside production: generated once and kept under DATA_DIR.
  expect(c.jwtSecret.length).toBeGreaterThanOrEqual(32);
  expect(fs.readFileSync(path.join(dir, 'jwt-secret'), 'utf8').trim()).toBe(c.jwtSecret);
  expect(loadConfig({ DATA_DIR: dir }).jwtSecret).toBe(c.jwtSecret);
});

test('valid values are taken', () => {
  const c = loadConfig({
    ...base(),
    PORT: '65535',
    HOST: '0.0.0.0',
    DATABASE_URL: 'mysql://u:p@db.example:3307/other_db',
    RATE_LIMIT_REST_PER_HOUR: '5',
    RATE_LIMIT_GRAPHQL_PER_HOUR: '6',
    MAX_BODY_BYTES: '1024',
    METRICS_ENABLED: 'false',
    LOG_LEVEL: 'warn',
    REDIS_URL: 'redis://127.0.0.1:6379',
    MEILI_URL: 'http://127.0.0.1:7700',
  });
  expect(c).toMatchObject({
    port: 65535,
    host: '0.0.0.0',
    databaseName: 'other_db',
    namespace: 'other_db',
    rateLimitRestPerHour: 5,
    rateLimitGraphqlPerHour: 6,
    maxBodyBytes: 1024,
    metricsEnabled: false,
    logLevel: 'warn',
    redisUrl: 'redis://127.0.0.1:6379',
    meiliUrl: 'http://127.0.0.1:7700',
    jwtSecret: 'a-secret-of-sufficient-length',
  });
  expect(loadConfig({ ...base(), PORT: '1' }).port).toBe(1);
});

test.each([
  ['PORT', '0'],
  ['PORT', '70000'],
  ['PORT', '65536'],
  ['PORT', 'abc'],
  ['MAX_BODY_BYTES', '0'],
  ['MAX_BODY_BYTES', '-1'],
  ['MAX_BODY_BYTES', '1.5'],
  ['RATE_LIMIT_REST_PER_HOUR', '0'],
  ['RATE_LIMIT_GRAPHQL_PER_HOUR', '0'],
  ['DATABASE_URL', 'not a url'],
  ['DATABASE_URL', 'postgres://x@h/db'],
  ['REDIS_URL', 'nope'],
  ['MEILI_URL', '::'],
])('%s=%s is rejected, naming the variable', (key, value) => {
  const problems = problemsOf({ ...base(), [key]: value });
  expect(problems).toHaveLength(1);
  expect(problems[0]).toContain(key);
});

test('every problem is listed at once', () => {
  const problems = problemsOf({
    ...base(),
    PORT: '0',
    MAX_BODY_BYTES: '-1',
    RATE_LIMIT_REST_PER_HOUR: '0',
    RATE_LIMIT_GRAPHQL_PER_HOUR: '0',
    DATABASE_URL: 'garbage',
  });
  for (const key of ['PORT', 'MAX_BODY_BYTES', 'RATE_LIMIT_REST_PER_HOUR', 'RATE_LIMIT_GRAPHQL_PER_HOUR', 'DATABASE_URL']) {
    expect(problems.filter((p) => p.includes(key))).toHaveLength(1);
  }
  expect(problems).toHaveLength(5);
  try {
    loadConfig({ ...base(), PORT: '70000', MAX_BODY_BYTES: '0' });
  } catch (e) {
    expect((e as Error).message).toMatch(/PORT[\s\S]*MAX_BODY_BYTES|MAX_BODY_BYTES[\s\S]*PORT/);
  }
});

test('production without JWT_SECRET is refused (listed with the other problems)', () => {
  const { JWT_SECRET: _s, ...env } = base();
  const problems = problemsOf({ ...env, NODE_ENV: 'production' });
  expect(problems).toEqual([expect.stringContaining('JWT_SECRET')]);
  const both = problemsOf({ ...env, NODE_ENV: 'production', PORT: '0' });
  expect(both).toHaveLength(2);
  expect(both.some((p) => p.includes('JWT_SECRET'))).toBe(true);
  expect(both.some((p) => p.includes('PORT'))).toBe(true);
  expect(loadConfig({ ...base(), NODE_ENV: 'production' }).jwtSecret).toBe('a-secret-of-sufficient-length');
});

test('a second engine for the recent index: its URL, its key (default: MEILI_MASTER_KEY), only with MEILI_URL', () => {
  const meili = { MEILI_URL: 'http://10.0.0.5:7700', MEILI_MASTER_KEY: 'main-key' };
  expect(loadConfig({ ...base(), ...meili })).toMatchObject({ meiliRecentUrl: null, meiliRecentMasterKey: 'main-key' });
  expect(loadConfig({ ...base(), ...meili, MEILI_RECENT_URL: 'http://10.0.0.6:7700' })).toMatchObject({
    meiliRecentUrl: 'http://10.0.0.6:7700',
    meiliRecentMasterKey: 'main-key',
  });
  expect(loadConfig({ ...base(), ...meili, MEILI_RECENT_URL: 'http://10.0.0.6:7700', MEILI_RECENT_MASTER_KEY: 'k2' }).meiliRecentMasterKey).toBe('k2');
  expect(problemsOf({ ...base(), MEILI_RECENT_URL: 'http://10.0.0.6:7700' })).toEqual([expect.stringContaining('MEILI_RECENT_URL')]);
  expect(problemsOf({ ...base(), ...meili, MEILI_RECENT_URL: 'nope' })).toEqual([expect.stringContaining('MEILI_RECENT_URL')]);
});

test('a DATABASE_URL without a database name is refused', () => {
  const problems = problemsOf({ ...base(), DATABASE_URL: 'mysql://root@127.0.0.1:3306' });
  expect(problems).toEqual([expect.stringContaining('DATABASE_URL')]);
  const both = problemsOf({ ...base(), DATABASE_URL: 'mysql://root@127.0.0.1:3306', PORT: '0' });
  expect(both).toHaveLength(2);
});

test('GraphQL bodies have their own limit (1 MiB); METRICS_TOKEN is optional and at least 16 characters', () => {
  expect(loadConfig(base())).toMatchObject({ maxGraphqlBodyBytes: 1024 * 1024, metricsToken: null });
  expect(loadConfig({ ...base(), MAX_GRAPHQL_BODY_BYTES: '2048', METRICS_TOKEN: 'a-long-enough-metrics-token' })).toMatchObject({
    maxGraphqlBodyBytes: 2048,
    metricsToken: 'a-long-enough-metrics-token',
  });
  expect(problemsOf({ ...base(), METRICS_TOKEN: 'short' })).toEqual(['METRICS_TOKEN must be at least 16 characters']);
});

test('limits on unauthenticated work: defaults, values, and positive integers only', () => {
  expect(loadConfig(base())).toMatchObject({
    anonymousRequestsPerMinute: 60,
    signInsPerAccount: 30,
    signInsPerAddress: 30,
    signUpsPerHour: 10,
    browserSessionsPerUser: 100,
    deviceLoginFailureBudget: 100,
  });
  const names = {
    ANONYMOUS_REQUESTS_PER_MINUTE: 'anonymousRequestsPerMinute',
    SIGN_INS_PER_ACCOUNT: 'signInsPerAccount',
    SIGN_INS_PER_ADDRESS: 'signInsPerAddress',
    SIGN_UPS_PER_HOUR: 'signUpsPerHour',
    BROWSER_SESSIONS_PER_USER: 'browserSessionsPerUser',
    DEVICE_LOGIN_FAILURE_BUDGET: 'deviceLoginFailureBudget',
  };
  for (const [env, key] of Object.entries(names)) {
    expect(loadConfig({ ...base(), [env]: '7' })).toMatchObject({ [key]: 7 });
    for (const bad of ['0', '-1', '1.5', 'many']) expect(problemsOf({ ...base(), [env]: bad })).toEqual([`${env} must be a positive integer`]);
  }
});

test('empty variables count as unset', () => {
  expect(loadConfig({ ...base(), PORT: '', MAX_BODY_BYTES: '' })).toMatchObject({ port: 3000, maxBodyBytes: 50 * 1024 * 1024 });
});

test('TRUST_PROXY: loopback by default; false, hops, or a list of addresses and ranges; true is refused', () => {
  expect(loadConfig(base()).trustProxy).toBe('loopback');
  expect(loadConfig({ ...base(), TRUST_PROXY: 'false' }).trustProxy).toBe(false);
  // Any sender could choose its own address for the failed-authentication limit.
  expect(problemsOf({ ...base(), TRUST_PROXY: 'true' })).toEqual([
    expect.stringMatching(/^TRUST_PROXY=true trusts any sender's X-Forwarded-For; list your proxies/),
  ]);
  expect(loadConfig({ ...base(), TRUST_PROXY: '2' }).trustProxy).toBe(2);
  expect(loadConfig({ ...base(), TRUST_PROXY: 'loopback, 10.0.0.0/8, fd00::/8, 192.0.2.7' }).trustProxy).toBe('loopback, 10.0.0.0/8, fd00::/8, 192.0.2.7');
  for (const bad of ['yes', '10.0.0.0/33', 'example.com', '10.0.0.1/8/2', '1.2.3']) {
    expect(problemsOf({ ...base(), TRUST_PROXY: bad })).toEqual([expect.stringMatching(/^TRUST_PROXY must be/)]);
  }
});

test('REDACT_SECRETS: on by default; on, report or off; anything else is listed with the other problems', () => {
  expect(loadConfig(base()).redactSecrets).toBe('on');
  for (const v of ['on', 'report', 'off'] as const) expect(loadConfig({ ...base(), REDACT_SECRETS: v }).redactSecrets).toBe(v);
  for (const bad of ['yes', 'ON', 'true', 'mask']) {
    expect(problemsOf({ ...base(), REDACT_SECRETS: bad, PORT: '0' })).toEqual([
      expect.stringMatching(/^PORT must be/),
      'REDACT_SECRETS must be on, report or off',
    ]);
  }
});

test('accounts: SIGNUP_ENABLED and COOKIE_SECURE default off and take only true/false; PUBLIC_URL is an http(s) URL', () => {
  const d = loadConfig(base());
  expect(d.signupEnabled).toBe(false);
  expect(d.cookieSecure).toBe(false);
  expect(d.publicUrl).toBeNull();
  const on = loadConfig({ ...base(), SIGNUP_ENABLED: 'true', COOKIE_SECURE: 'true', PUBLIC_URL: 'https://archive.example.com/' });
  expect(on.signupEnabled).toBe(true);
  expect(on.cookieSecure).toBe(true);
  expect(on.publicUrl).toBe('https://archive.example.com');
  const problems = problemsOf({ ...base(), SIGNUP_ENABLED: 'yes', COOKIE_SECURE: '1', PUBLIC_URL: 'ftp://x' });
  expect(problems).toEqual(['SIGNUP_ENABLED must be true or false', 'COOKIE_SECURE must be true or false', 'PUBLIC_URL must be a URL (http: or https:)']);
});

test('admission and slow bodies: defaults, and a capacity of at least three bodies', () => {
  const d = loadConfig(base());
  expect(d).toMatchObject({
    uploadBytesInFlight: 192 * 1024 * 1024,
    uploadsPerUser: 24,
    uploadQueueWaitMs: 5000,
    bodyMinBytesPerSecond: 64 * 1024,
    bodyMinRateGraceS: 10,
  });
  // Unset, the capacity grows with a larger body limit.
  expect(loadConfig({ ...base(), MAX_BODY_BYTES: String(100 * 1024 * 1024) }).uploadBytesInFlight).toBe(300 * 1024 * 1024);
  expect(loadConfig({ ...base(), MAX_BODY_BYTES: '1000', UPLOAD_BYTES_IN_FLIGHT: '3000' }).uploadBytesInFlight).toBe(3000);
  expect(problemsOf({ ...base(), MAX_BODY_BYTES: '1000', UPLOAD_BYTES_IN_FLIGHT: '2999' })).toEqual([
    expect.stringMatching(/^UPLOAD_BYTES_IN_FLIGHT must be at least three times MAX_BODY_BYTES/),
  ]);
  expect(loadConfig({ ...base(), UPLOAD_QUEUE_WAIT_MS: '0' }).uploadQueueWaitMs).toBe(0);
  for (const [key, bad] of [
    ['UPLOAD_QUEUE_WAIT_MS', '600001'],
    ['UPLOAD_QUEUE_WAIT_MS', '-1'],
    ['BODY_MIN_BYTES_PER_S', '0'],
    ['BODY_MIN_RATE_GRACE_S', '1.5'],
  ]) {
    expect(problemsOf({ ...base(), [key]: bad })).toEqual([expect.stringContaining(key)]);
  }
});

test('a read replica: DATABASE_REPLICA_URL (a mysql/mariadb URL), its wait budget and its maximum lag', () => {
  const none = loadConfig(base());
  expect([none.databaseReplicaUrl, none.databaseReplicaWaitMs, none.databaseReplicaMaxLagMs]).toEqual([null, 200, 5000]);
  const c = loadConfig({
    ...base(),
    DATABASE_REPLICA_URL: 'mysql://app:pw@replica:3306/session_archive',
    DATABASE_REPLICA_WAIT_MS: '0',
    DATABASE_REPLICA_MAX_LAG_MS: '600000',
  });
  expect([c.databaseReplicaUrl, c.databaseReplicaWaitMs, c.databaseReplicaMaxLagMs]).toEqual(['mysql://app:pw@replica:3306/session_archive', 0, 600000]);
  expect(loadConfig({ ...base(), DATABASE_REPLICA_URL: 'mariadb://replica' }).databaseReplicaUrl).toBe('mariadb://replica');
  expect(
    problemsOf({ ...base(), DATABASE_REPLICA_URL: 'http://replica/x', DATABASE_REPLICA_WAIT_MS: '10001', DATABASE_REPLICA_MAX_LAG_MS: '0' }).sort(),
  ).toEqual([
    'DATABASE_REPLICA_MAX_LAG_MS must be an integer from 1 to 600000',
    'DATABASE_REPLICA_URL must be a URL (mysql: or mariadb:)',
    'DATABASE_REPLICA_WAIT_MS must be an integer from 0 to 10000',
  ]);
  expect(problemsOf({ ...base(), DATABASE_REPLICA_URL: 'mysql://replica/bad%20name' })).toEqual([
    "DATABASE_REPLICA_URL must name no database (the primary's is read) or a valid one (letters, digits, _, $ or -)",
  ]);
});

test('several engines (MEILI_URLS) and standbys (MEILI_STANDBY_URLS), one key for all', () => {
  const urls = { MEILI_URLS: 'http://10.0.0.5:7700, http://10.0.0.6:7700', MEILI_MASTER_KEY: 'k' };
  expect(loadConfig({ ...base(), ...urls })).toMatchObject({
    meiliUrl: 'http://10.0.0.5:7700',
    meiliUrls: ['http://10.0.0.5:7700', 'http://10.0.0.6:7700'],
    meiliStandbyUrls: [],
    meiliMasterKey: 'k',
  });
  expect(loadConfig({ ...base(), ...urls, MEILI_STANDBY_URLS: 'http://10.0.1.5:7700,http://10.0.1.6:7700' }).meiliStandbyUrls).toEqual([
    'http://10.0.1.5:7700',
    'http://10.0.1.6:7700',
  ]);
  expect(loadConfig({ ...base(), MEILI_URL: 'http://10.0.0.5:7700', MEILI_STANDBY_URLS: 'http://10.0.1.5:7700' })).toMatchObject({
    meiliUrls: ['http://10.0.0.5:7700'],
    meiliStandbyUrls: ['http://10.0.1.5:7700'],
  });
  expect(loadConfig({ ...base() })).toMatchObject({ meiliUrl: null, meiliUrls: [], meiliStandbyUrls: [], searchStandbyRetentionMinutes: 60 });
  expect(loadConfig({ ...base(), SEARCH_STANDBY_RETENTION_MINUTES: '240' }).searchStandbyRetentionMinutes).toBe(240);
  expect(problemsOf({ ...base(), SEARCH_STANDBY_RETENTION_MINUTES: '0' })).toEqual([expect.stringContaining('SEARCH_STANDBY_RETENTION_MINUTES')]);
  // The embedded main engine's indexing threads: the engine's default unless set, 1–256.
  expect(loadConfig({ ...base() }).searchIndexingThreads).toBeNull();
  expect(loadConfig({ ...base(), SEARCH_INDEXING_THREADS: '2' }).searchIndexingThreads).toBe(2);
  for (const bad of ['0', '257', 'two', '-1', '1.5']) {
    expect(problemsOf({ ...base(), SEARCH_INDEXING_THREADS: bad })).toEqual(['SEARCH_INDEXING_THREADS must be an integer from 1 to 256']);
  }
  // An empty entry: that engine has no standby.
  expect(loadConfig({ ...base(), ...urls, MEILI_STANDBY_URLS: 'http://10.0.1.5:7700,' }).meiliStandbyUrls).toEqual(['http://10.0.1.5:7700', '']);
  expect(problemsOf({ ...base(), ...urls, MEILI_STANDBY_URLS: ',' })).toEqual([expect.stringContaining('MEILI_STANDBY_URLS must be comma-separated URLs')]);
  expect(problemsOf({ ...base(), ...urls, MEILI_URL: 'http://10.0.0.7:7700' })).toEqual([expect.stringContaining('MEILI_URL and MEILI_URLS are exclusive')]);
  expect(problemsOf({ ...base(), ...urls, MEILI_STANDBY_URLS: 'http://10.0.1.5:7700' })).toEqual([expect.stringContaining('one standby per engine')]);
  expect(problemsOf({ ...base(), ...urls, MEILI_STANDBY_URLS: 'http://10.0.1.5:7700,http://10.0.0.6:7700' })).toEqual([
    expect.stringContaining('other servers than the engines'),
  ]);
  expect(problemsOf({ ...base(), MEILI_STANDBY_URLS: 'http://10.0.1.5:7700' })).toEqual([expect.stringContaining('MEILI_STANDBY_URLS needs')]);
  expect(problemsOf({ ...base(), ...urls, MEILI_RECENT_URL: 'http://10.0.0.8:7700' })).toEqual([
    expect.stringContaining('MEILI_RECENT_URL goes with MEILI_URL only'),
  ]);
  expect(problemsOf({ ...base(), MEILI_URLS: 'http://a:1,ftp://b' })).toEqual([expect.stringContaining('MEILI_URLS must be comma-separated URLs')]);
  expect(problemsOf({ ...base(), MEILI_URLS: 'http://a:1,http://a:1' })).toEqual([expect.stringContaining('names an engine twice')]);
});
