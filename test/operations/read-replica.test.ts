import Redis from 'ioredis';
import { operatorCtx } from '../../src/services/context';
import { createUser } from '../../src/services/users';
import { SID, startTestApp, type TestApp, type TestUser } from '../support/app';
import { browser } from '../support/cookie-client';
import { testConnection } from '../support/connection';
import { createTestDatabase, type TestDatabase } from '../support/db';
import { APP_PASSWORD, APP_USER, startMariadbPair, type MariadbPair } from '../support/mariadb-pair';
import { eventually } from '../support/eventually';

/**
 * DATABASE_REPLICA_URL on two private MariaDB servers (a primary and its GTID replica, started
 * here): reads go to the replica, a user reads their own writes on every instance, and a replica
 * that is stopped, dead or too far behind costs no error — reads go to the primary meanwhile.
 */
const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

let pair: MariadbPair;
let db: TestDatabase;
/** Two instances sharing Redis (users' write positions), reading through the replica whatever its lag. */
let x: TestApp;
let y: TestApp;
/** An instance that stops reading from a replica more than one second behind. */
let z: TestApp;

beforeAll(async () => {
  pair = await startMariadbPair();
  db = await createTestDatabase('sa_replica', pair.primary.rootUrl);
  await pair.synced();
  x = await startTestApp({ db: appDb(), rateLimit: false, env: replicaEnv() });
  y = await startTestApp({ db: appDb(), rateLimit: false, env: replicaEnv() });
  z = await startTestApp({ db: appDb(), rateLimit: false, env: { ...replicaEnv(), DATABASE_REPLICA_MAX_LAG_MS: '1000' } });
}, 180_000);

/** The service connects as an unprivileged user: the replica's read_only applies to it. */
const appDb = () => ({ url: `${pair.primary.appUrl}/${db.name}?connection_limit=3`, name: db.name, drop: () => Promise.resolve() });
const replicaEnv = () => ({
  DATABASE_REPLICA_URL: `${pair.replica.appUrl}/${db.name}?connection_limit=3`,
  DATABASE_REPLICA_WAIT_MS: '300',
  DATABASE_REPLICA_MAX_LAG_MS: '600000',
  REDIS_URL,
  WORKERS_ENABLED: 'false',
});

afterAll(async () => {
  await x?.close();
  await y?.close();
  await z?.close();
  if (db) {
    const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
    try {
      await redis.connect();
      const keys = await redis.keys(`${db.name}:gtid:*`);
      if (keys.length) await redis.del(...keys);
    } finally {
      redis.disconnect();
    }
  }
  await pair?.close();
}, 120_000);

/** One sample of /metrics: `name` or `name{labels}` → value. */
async function metrics(app: TestApp): Promise<Map<string, number>> {
  const r = await app.request('GET', '/metrics');
  expect(r.status).toBe(200);
  const out = new Map<string, number>();
  for (const line of r.text.split('\n')) {
    const m = /^(db_replica_\w+(?:\{[^}]*\})?) (\S+)$/.exec(line);
    if (m) out.set(m[1], Number(m[2]));
  }
  return out;
}
const metric = async (app: TestApp, name: string) => (await metrics(app)).get(name) ?? NaN;

async function put(app: TestApp, user: TestUser, project: string, n: number, name: string): Promise<void> {
  const r = await app.request('PUT', `/api/v1/projects/${project}/sessions/${SID(n)}`, { token: user.token, body: { name, markdown: `# ${name}\n` } });
  expect([200, 201]).toContain(r.status);
}

async function names(app: TestApp, user: TestUser, project: string): Promise<string[]> {
  const r = await app.request('GET', `/api/v1/projects/${project}/sessions`, { token: user.token });
  expect(r.status).toBe(200);
  return (r.body.data.sessions as Array<{ name: string }>).map((s) => s.name).sort();
}

/** A change made on the primary behind the service's back: no user's write position covers it. */
async function renameOnPrimary(sessionNumber: number, name: string): Promise<void> {
  await pair.primary.root((c) => c.query(`UPDATE \`${db.name}\`.sessions SET name = ? WHERE id = ?`, [name, SID(sessionNumber)]));
}

test("the replica refuses the application user's writes (read_only); the primary takes them", async () => {
  const conn = (port: number) => testConnection({ host: '127.0.0.1', port, user: APP_USER, password: APP_PASSWORD, database: db.name });
  const replica = await conn(pair.replica.port);
  try {
    await expect(replica.query('CREATE TABLE read_only_probe (a INT)')).rejects.toMatchObject({ errno: 1290 });
    expect(await replica.query('SELECT COUNT(*) AS n FROM sessions')).toHaveLength(1);
  } finally {
    await replica.end();
  }
  const primary = await conn(pair.primary.port);
  try {
    await primary.query('CREATE TABLE read_only_probe (a INT)');
    await primary.query('DROP TABLE read_only_probe');
  } finally {
    await primary.end();
  }
});

test('reads go to the replica; a user reads their own writes on every instance while it does not apply them', async () => {
  const u = await x.createUser('replica-reader');
  await put(x, u, 'rp', 1, 'first');
  // w writes nothing while the replica stands still: only the lag sends w's reads to the primary.
  const w = await x.createUser('replica-bystander');
  await put(x, w, 'lag', 3, 'third');
  await pair.synced();
  expect(await names(y, u, 'rp')).toEqual(['first']);

  await pair.stopReplicaSql();
  try {
    await renameOnPrimary(1, 'renamed on the primary');
    await renameOnPrimary(3, 'third, renamed');
    // The replica answers: it still has the old name.
    const readsBefore = await metric(y, 'db_replica_reads_total');
    expect(await names(x, u, 'rp')).toEqual(['first']);
    expect(await names(y, u, 'rp')).toEqual(['first']);
    expect(await metric(y, 'db_replica_reads_total')).toBeGreaterThan(readsBefore);

    // The user's own write, through x: y knows its position (Redis), waits for the replica in
    // vain, and reads from the primary (which also has the rename).
    await put(x, u, 'rp', 2, 'second');
    expect(await names(y, u, 'rp')).toEqual(['renamed on the primary', 'second']);
    expect(await names(x, u, 'rp')).toEqual(['renamed on the primary', 'second']);
    const one = await y.request('GET', `/api/v1/projects/rp/sessions/${SID(2)}`, { token: u.token });
    expect(one.status).toBe(200);
    expect(one.body.data.session.name).toBe('second');
    expect(await metric(y, 'db_replica_fallbacks_total{reason="wait_timeout"}')).toBeGreaterThan(0);

    await eventually('the lag to show in /metrics', async () => (await metric(x, 'db_replica_lag_seconds')) > 0);
    // y reads w's sessions from the replica (w wrote nothing since); z does not read from a
    // replica more than a second behind: it reads the primary's state.
    expect(await names(y, w, 'lag')).toEqual(['third']);
    await eventually('z to read from the primary', async () => (await names(z, w, 'lag')).includes('third, renamed'));
    expect(await metric(z, 'db_replica_fallbacks_total{reason="lagging"}')).toBeGreaterThan(0);

    // An instance started now has never seen this replica caught up: it reads from the primary.
    const late = await startTestApp({ db: appDb(), rateLimit: false, env: replicaEnv() });
    try {
      expect(await names(late, w, 'lag')).toEqual(['third, renamed']);
      expect(await metric(late, 'db_replica_fallbacks_total{reason="starting"}')).toBeGreaterThan(0);
    } finally {
      await late.close();
    }
  } finally {
    await pair.startReplicaSql();
  }
  await pair.synced();
  await eventually('the lag to go back to 0', async () => (await metric(x, 'db_replica_lag_seconds')) === 0);
  const readsBefore = await metric(y, 'db_replica_reads_total');
  expect(await names(y, u, 'rp')).toEqual(['renamed on the primary', 'second']);
  expect(await metric(y, 'db_replica_reads_total')).toBeGreaterThan(readsBefore);
  // An instance whose Redis cannot tell the users' last writes reads from the primary.
  const noRedis = await startTestApp({ db: appDb(), rateLimit: false, env: { ...replicaEnv(), REDIS_URL: 'redis://127.0.0.1:1' } });
  try {
    await eventually('Redis to be found wanting', async () => {
      expect(await names(noRedis, u, 'rp')).toEqual(['renamed on the primary', 'second']);
      return (await metric(noRedis, 'db_replica_fallbacks_total{reason="marks_unavailable"}')) > 0;
    });
    expect(await metric(noRedis, 'db_replica_reads_total')).toBe(0);
  } finally {
    await noRedis.close();
  }
  await eventually('z to read from the replica again', async () => {
    const before = await metric(z, 'db_replica_reads_total');
    await names(z, u, 'rp');
    return (await metric(z, 'db_replica_reads_total')) > before;
  });
}, 120_000);

test('a member removed from a team loses its projects from the next request, though the replica has not applied the removal', async () => {
  const admin = await x.createUser('replica-team-admin');
  const password = 'replica member password';
  const email = `replica-member-${db.name}@example.test`;
  const member = await createUser(operatorCtx(x.deps.db), email, 'Member', { password });
  const team = await x.request('POST', '/api/v1/teams', { token: admin.token, body: { name: 'Replica team' } });
  expect(team.status).toBe(201);
  const teamId = team.body.data.team.id as string;
  expect((await x.request('POST', `/api/v1/teams/${teamId}/members`, { token: admin.token, body: { email, role: 'member' } })).status).toBe(201);
  await put(x, admin, 'team-rp', 5, 'team session');
  expect((await x.request('POST', '/api/v1/projects/team-rp/move', { token: admin.token, body: { teamId } })).status).toBe(200);
  await pair.synced();

  // The member signs in on y (a browser session: its memberships are not read with the credential).
  const b = browser(y);
  expect((await b.signIn(email, password)).status).toBe(200);
  const listed = async () => ((await b.request('GET', '/api/v1/projects')).body.data.projects as Array<{ id: string }>).map((p) => p.id);
  expect(await listed()).toContain('team-rp');

  await pair.stopReplicaSql();
  try {
    expect((await x.request('DELETE', `/api/v1/teams/${teamId}/members/${member.id}`, { token: admin.token })).status).toBe(200);
    // The replica still holds the membership; the member's next request reads none of the team's.
    const readsBefore = await metric(y, 'db_replica_reads_total');
    expect(await listed()).not.toContain('team-rp');
    expect(await metric(y, 'db_replica_reads_total')).toBeGreaterThan(readsBefore);
    expect([403, 404]).toContain((await b.request('GET', '/api/v1/projects/team-rp/sessions')).status);
  } finally {
    await pair.startReplicaSql();
  }
  await pair.synced();
}, 120_000);

test('a dead replica: reads go to the primary without an error, and to the replica again once it is back', async () => {
  const u = await x.createUser('replica-survivor');
  await put(x, u, 'dead', 1, 'before');
  await pair.synced();
  await pair.replica.kill();
  try {
    expect(await names(x, u, 'dead')).toEqual(['before']);
    await put(x, u, 'dead', 2, 'during');
    expect(await names(y, u, 'dead')).toEqual(['before', 'during']);
    const other = await y.createUser('replica-other');
    const recent = await y.request('GET', '/api/v1/sessions/recent', { token: other.token });
    expect(recent.status).toBe(200);
    expect(recent.body.data.sessions).toEqual([]);
    await eventually('x to see the replica down', async () => (await metric(x, 'db_replica_up')) === 0);
    const m = await metrics(y);
    expect((m.get('db_replica_fallbacks_total{reason="down"}') ?? 0) + (m.get('db_replica_fallbacks_total{reason="error"}') ?? 0)).toBeGreaterThan(0);
    // Reads keep working while it is down.
    const r = await y.request('GET', `/api/v1/projects/dead/sessions/${SID(2)}`, { token: u.token, headers: { Accept: 'text/markdown' } });
    expect(r.status).toBe(200);
    expect(r.text).toBe('# during\n');
  } finally {
    await pair.replica.start();
  }
  await pair.synced();
  await eventually('x to see the replica up', async () => (await metric(x, 'db_replica_up')) === 1);
  await eventually('x to read from the replica again', async () => {
    const before = await metric(x, 'db_replica_reads_total');
    expect(await names(x, u, 'dead')).toEqual(['before', 'during']);
    return (await metric(x, 'db_replica_reads_total')) > before;
  });
}, 120_000);
