/**
 * The one mapping of database errors (src/data/errors.ts), on errors the real driver raises:
 * a duplicate key and a lock-wait timeout, bare and wrapped (`cause`), and what is neither.
 */
import crypto from 'node:crypto';
import * as mariadb from 'mariadb';
import { isDatabaseUnavailable, isDuplicateKey, isRetryable, RetryTransaction } from '../../src/data/errors';

const DB = `sa_test_errors_${crypto.randomBytes(4).toString('hex')}`;
let a: mariadb.Connection;
let b: mariadb.Connection;

beforeAll(async () => {
  a = await mariadb.createConnection({ host: '127.0.0.1', port: 3306, user: 'root' });
  await a.query(`CREATE DATABASE \`${DB}\``);
  await a.query(`USE \`${DB}\``);
  await a.query('CREATE TABLE t (id INT PRIMARY KEY, v TEXT) ENGINE=InnoDB');
  await a.query('INSERT INTO t VALUES (1, ?)', ['1062 Duplicate entry (a value, not an error)']);
  b = await mariadb.createConnection({ host: '127.0.0.1', port: 3306, user: 'root', database: DB });
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
