/**
 * The one mapping of database errors (src/data/errors.ts), on errors the real driver raises:
 * a duplicate key and a lock-wait timeout, bare and wrapped (`cause`), and what is neither; a
 * server refusing connections for having too many (busy) against one that cannot be reached.
 */
import crypto from 'node:crypto';
import net from 'node:net';
import * as mariadb from 'mariadb';
import { databaseRefusal, isDatabaseUnavailable, isDuplicateKey, isRetryable, isServerFull, RetryTransaction } from '../../src/data/errors';
import { testConnection } from '../support/connection';

const DB = `sa_test_errors_${crypto.randomBytes(4).toString('hex')}`;
let a: mariadb.Connection;
let b: mariadb.Connection;

beforeAll(async () => {
  a = await testConnection({ host: '127.0.0.1', port: 3306, user: 'root' });
  await a.query(`CREATE DATABASE \`${DB}\``);
  await a.query(`USE \`${DB}\``);
  await a.query('CREATE TABLE t (id INT PRIMARY KEY, v TEXT) ENGINE=InnoDB');
  await a.query('INSERT INTO t VALUES (1, ?)', ['1062 Duplicate entry (a value, not an error)']);
  b = await testConnection({ host: '127.0.0.1', port: 3306, user: 'root', database: DB });
});
afterAll(async () => {
  await b?.end();
  await a?.query(`DROP DATABASE IF EXISTS \`${DB}\``);
  await a?.end();
});

const caught = (p: Promise<unknown>) =>
  p.then(
    () => null,
    (e: unknown) => e,
  );

test('a duplicate key, bare or wrapped, is a duplicate and nothing else', async () => {
  const err = await caught(a.query('INSERT INTO t VALUES (1, ?)', ['x']));
  expect(isDuplicateKey(err)).toBe(true);
  expect(isDuplicateKey(new Error('wrapped', { cause: err }))).toBe(true);
  expect(isRetryable(err)).toBe(false);
  expect(isDatabaseUnavailable(err)).toBe(false);
});

test('a lock-wait timeout is retryable; an error that merely says 1062 or deadlock is neither', async () => {
  await a.beginTransaction();
  await a.query('SELECT * FROM t WHERE id = 1 FOR UPDATE');
  await b.query('SET SESSION innodb_lock_wait_timeout = 1');
  const err = await caught(b.query('UPDATE t SET v = ? WHERE id = 1', ['y']));
  await a.rollback();
  expect(isRetryable(err)).toBe(true);
  expect(isDuplicateKey(err)).toBe(false);
  expect(isRetryable(new RetryTransaction('again'))).toBe(true);
  const text = new Error('row 1062: Duplicate entry about a deadlock');
  expect(isDuplicateKey(text)).toBe(false);
  expect(isRetryable(text)).toBe(false);
});

test('a server refusing connections for having too many is busy, never unavailable; one not there is unavailable', async () => {
  // A real refusal: an account limited to one connection asks for a second, alone and through a pool.
  const user = `sa_busy_${crypto.randomBytes(4).toString('hex')}`;
  const asUser = { host: '127.0.0.1', port: 3306, user, password: 'pw' };
  await a.query(`CREATE USER '${user}'@'%' IDENTIFIED BY 'pw' WITH MAX_USER_CONNECTIONS 1`);
  let held: mariadb.Connection | undefined;
  let pool: mariadb.Pool | undefined;
  try {
    held = await testConnection(asUser);
    pool = mariadb.createPool({ ...asUser, connectionLimit: 1, acquireTimeout: 1500, initializationTimeout: 1000 });
    const refused = await caught(mariadb.createConnection(asUser));
    expect((refused as { errno?: number }).errno).toBe(1226);
    expect(databaseRefusal(refused)).toBe('busy');
    const viaPool = await caught(pool.getConnection());
    expect(viaPool).not.toBeNull();
    expect(databaseRefusal(viaPool)).toBe('busy');
    expect(isDatabaseUnavailable(viaPool)).toBe(false);
  } finally {
    await pool?.end().catch(() => undefined);
    await held?.end();
    await a.query(`DROP USER IF EXISTS '${user}'@'%'`);
  }
  // The server-wide limit (1040) carries SQLSTATE 08004, a connection exception's class: busy
  // still. Raised here by its fields, as the driver reports it: reaching it for real would refuse
  // every other test's connections too.
  const tooMany = Object.assign(new Error('Too many connections'), { errno: 1040, code: 'ER_CON_COUNT_ERROR', sqlState: '08004' });
  expect(isServerFull(tooMany)).toBe(true);
  expect(isDatabaseUnavailable(tooMany)).toBe(false);
  expect(databaseRefusal(new Error('pool timeout', { cause: tooMany }))).toBe('busy');

  // Nothing listening: unavailable.
  const port = await new Promise<number>((resolve) => {
    const srv = net.createServer().listen(0, '127.0.0.1', () => {
      const p = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(p));
    });
  });
  const down = await caught(mariadb.createConnection({ host: '127.0.0.1', port, user: 'root', connectTimeout: 1000 }));
  expect(databaseRefusal(down)).toBe('unavailable');
  expect(isDatabaseUnavailable(down)).toBe(true);
  expect(isServerFull(down)).toBe(false);
  expect(databaseRefusal(await caught(a.query('INSERT INTO t VALUES (1, ?)', ['x'])))).toBeNull();
});
