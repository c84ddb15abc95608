/**
 * Reads of a page of sessions by id (search's re-check, sessionsMatchingAmong; by key,
 * sessionsByKeys and the resume search) go through the (userId, id) index whatever the
 * optimizer's statistics say: a member of many teams has more scope × id ranges than the
 * optimizer dives into, and on a table it estimates badly it chose a full scan.
 */
import * as mariadb from 'mariadb';
import { resumableSessionsByKeys, sessionsByKeys, sessionsByKeysSql, sessionsMatchingAmong, sessionsMatchingAmongSql } from '../../src/data/sessions';
import { sqlOn } from '../../src/data/sql';
import { createTestDatabase, ROOT_URL, rootConnection, type TestDatabase } from '../support/db';

let db: TestDatabase;
let conn: mariadb.Connection;
const owner = 'u-owner';
/** The owner and 20 teams: 21 scopes, as for a member of 20 teams. */
const scopes = [owner, ...Array.from({ length: 20 }, (_, i) => `team-${i}`)];
const ids = Array.from({ length: 10 }, (_, i) => `s-${i}`);

beforeAll(async () => {
  db = await createTestDatabase('sa_recheck');
  conn = await rootConnection(ROOT_URL, db.name);
  await conn.query("INSERT INTO users (id, email) VALUES (?, 'owner@example.test')", [owner]);
  await conn.query("INSERT INTO projects (id, ownerId, name, icon, color) VALUES ('p', ?, 'P', 'Code2', 'blue')", [owner]);
  const rows = Array.from({ length: 60 }, (_, i) => ['p', `s-${i}`, owner, owner, `session ${i}`]);
  await conn.batch(
    "INSERT INTO sessions (projectId, id, userId, uploadedBy, name, markdownSize, rawDataSize, etag, contentDigest, createdAt, updatedAt, startedAt, endedAt, metadataJson) VALUES (?, ?, ?, ?, ?, 0, 0, '', '', NOW(3), NOW(3), NOW(3), NOW(3), '{}')",
    rows,
  );
});

afterAll(async () => {
  await conn?.end();
  await db?.drop();
});

test('the re-check of a page for 21 scopes reads through sessions_userId_id_idx, not the whole table', async () => {
  const { from, where, params } = sessionsMatchingAmongSql(scopes, {}, ids);
  const [plan] = await conn.query(`EXPLAIN SELECT s.* FROM ${from} WHERE ${where}`, params);
  expect(plan).toMatchObject({ table: 's', type: 'range', key: 'sessions_userId_id_idx' });
});

test("the re-check returns exactly the caller's sessions among the ids", async () => {
  const handle = sqlOn(conn);
  const rows = await sessionsMatchingAmong(handle, scopes, {}, [...ids, 'missing']);
  expect(rows.map((r) => r.id).sort()).toEqual([...ids].sort());
  expect(await sessionsMatchingAmong(handle, ['someone-else'], {}, ids)).toEqual([]);
});

test('reads by key go through sessions_userId_id_idx and return exactly the sessions named, in the scopes', async () => {
  const keys = ids.map((sessionId) => ({ projectId: 'p', sessionId }));
  const { from, where, params } = sessionsByKeysSql(scopes, keys);
  const [plan] = await conn.query(`EXPLAIN SELECT s.* FROM ${from} WHERE ${where}`, params);
  expect(plan).toMatchObject({ table: 's', type: 'range', key: 'sessions_userId_id_idx' });

  const handle = sqlOn(conn);
  const named = [...keys, { projectId: 'other', sessionId: 's-11' }, { projectId: 'p', sessionId: 'missing' }];
  expect((await sessionsByKeys(handle, scopes, named)).map((r) => r.id).sort()).toEqual([...ids].sort());
  expect(await sessionsByKeys(handle, ['someone-else'], keys)).toEqual([]);
  // Resumable sessions carry session data: none of these do until one is given some.
  expect(await resumableSessionsByKeys(handle, scopes, keys, 5)).toEqual([]);
  await conn.query("UPDATE sessions SET sessionDataSize = 10 WHERE id IN ('s-1', 's-2')");
  expect((await resumableSessionsByKeys(handle, scopes, keys, 5)).map((r) => [r.id, r.projectName]).sort()).toEqual([
    ['s-1', 'P'],
    ['s-2', 'P'],
  ]);
});
