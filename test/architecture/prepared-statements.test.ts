/**
 * Reads marked `prepared` (src/data/sql.ts) go through the binary protocol and must hand back
 * exactly what the text protocol does (the driver decodes the two apart); a server out of
 * prepared statements answers them through the text protocol.
 */
import * as mariadb from 'mariadb';
import { connectionOptions } from '../../src/db/client';
import { prepared, sqlOn, snapshotOn } from '../../src/data/sql';
import { createTestDatabase, type TestDatabase } from '../support/db';

let db: TestDatabase;
let pool: mariadb.Pool;
beforeAll(async () => {
  db = await createTestDatabase();
  pool = mariadb.createPool({ ...connectionOptions(db.url), connectionLimit: 2 });
});
afterAll(async () => {
  await pool?.end();
  await db?.drop();
});

// Every kind of column the hot reads return: text, nullable text, DATETIME(3), INT, BIGINT, BLOB, COUNT(*).
const ROW_SQL = `SELECT 'a' AS s, CAST(NULL AS CHAR) AS n, CAST('2026-11-26 21:00:00.123' AS DATETIME(3)) AS d, CAST(7 AS SIGNED INT) AS i,
  CAST(9007199254740 AS SIGNED) AS b, CAST('bytes' AS BINARY) AS blob_, (SELECT COUNT(*) FROM users) AS c, ? AS p`;
const PREPARED_ROW_SQL = prepared(`${ROW_SQL} `);

test('a prepared read hands back what the text protocol does, on a pool and in a snapshot', async () => {
  const sql = sqlOn(pool);
  const viaText = await sql.query(ROW_SQL, 'x');
  const viaPrepared = await sql.query(PREPARED_ROW_SQL, 'x');
  expect(viaPrepared).toEqual(viaText);
  expect(viaPrepared[0]).toMatchObject({ s: 'a', n: null, i: 7, b: 9007199254740, c: 0, p: 'x' });
  expect((viaPrepared[0].d as Date).toISOString()).toBe('2026-11-26T21:00:00.123Z');
  expect(Buffer.isBuffer(viaPrepared[0].blob_)).toBe(true);
  const snap = snapshotOn(pool);
  try {
    expect(await snap.query(PREPARED_ROW_SQL, 'x')).toEqual(viaText);
  } finally {
    await snap.release();
  }
});

test('a prepared read really goes through a prepared statement', async () => {
  // Counted on the snapshot's own connection (the session's counter: other tests run beside this one).
  const snap = snapshotOn(pool);
  try {
    const executed = async () => Number((await snap.query<{ Value: string }>("SHOW SESSION STATUS LIKE 'Com_stmt_execute'"))[0].Value);
    const before = await executed();
    await snap.query(PREPARED_ROW_SQL, 'y');
    await snap.query(ROW_SQL, 'y');
    expect(await executed()).toBe(before + 1);
  } finally {
    await snap.release();
  }
});

test('a server out of prepared statements answers through the text protocol', async () => {
  const full = Object.assign(new Error("Can't create more than max_prepared_stmt_count statements"), { errno: 1461 });
  const calls: string[] = [];
  const driver = {
    query: (() => (calls.push('query'), Promise.resolve([{ ok: 1 }]))) as unknown as mariadb.Pool['query'],
    execute: (() => (calls.push('execute'), Promise.reject(full))) as unknown as mariadb.Pool['execute'],
  };
  expect(await sqlOn(driver).query(PREPARED_ROW_SQL, 'z')).toEqual([{ ok: 1 }]);
  expect(calls).toEqual(['execute', 'query']);
  // Any other failure is the read's own.
  const broken = { ...driver, execute: (() => Promise.reject(new Error('gone'))) as unknown as mariadb.Pool['execute'] };
  await expect(sqlOn(broken).query(PREPARED_ROW_SQL, 'z')).rejects.toThrow('gone');
});

test('only reads can be marked', () => {
  expect(() => prepared('UPDATE users SET name = name')).toThrow('reads only');
});
