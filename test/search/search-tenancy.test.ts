/**
 * Index work is scoped by owner and exact id. Project ids are case-sensitive
 * (`ACME-APP` and `acme-app` are two projects, possibly of two users) while the engine compares
 * filter strings without case: no delete, retirement or exclusion may reach another project's
 * (or another user's) entries.
 */
import { Meilisearch } from 'meilisearch';
import { createNodeHttpClient } from '../../src/search/engine/http-client';
import { recentUidOf } from '../../src/search/engine/index-settings';
import type { Ctx } from '../../src/services/context';
import { createTestDatabase } from '../support/db';
import { ENGINE_TASK_WAIT, newSessionId, startSearchHarness, type SearchHarness, randomWord } from '../support/meili-harness';

const word = () => randomWord();
const keys = (r: { results: Array<{ projectId: string; sessionId: string }> }) => r.results.map((x) => `${x.projectId}/${x.sessionId}`).sort();

let h: SearchHarness;
let alice: Ctx;
let bob: Ctx;

beforeAll(async () => {
  h = await startSearchHarness();
  alice = await h.user();
  bob = await h.user();
}, 60_000);

afterAll(async () => {
  await h?.close();
});

test("deleting a project never removes another user's case-variant project from search", async () => {
  const w = word();
  await h.put(alice, 'ACME-APP', newSessionId(), { markdown: `# alice\n\n${w}` });
  const bobs = newSessionId();
  await h.put(bob, 'acme-app', bobs, { markdown: `# bob\n\n${w}` });
  await h.settle();
  expect((await h.find(bob, w)).total).toBe(1);

  await h.removeProject(alice, 'ACME-APP');
  await h.settle();
  expect(await h.find(alice, w)).toEqual({ total: 0, results: [] });
  const r = await h.find(bob, w);
  expect(r.total).toBe(1);
  expect(keys(r)).toEqual([`acme-app/${bobs}`]);

  // Also once both are in the main index (the delete reaches both indexes).
  await h.put(alice, 'ACME-APP', newSessionId(), { markdown: `# alice again\n\n${w}` });
  await h.settle();
  await h.search.compact(0);
  await h.settle();
  await h.removeProject(alice, 'ACME-APP');
  await h.settle();
  expect((await h.find(bob, w)).total).toBe(1);
}, 120_000);

test("deleting or moving a session never touches another user's session with a case-variant key", async () => {
  // The same session id under case-variant project ids of two users: session keys that differ in case only.
  const id = newSessionId();
  const w = word();
  await h.put(alice, 'Tenant-X', id, { markdown: `# alice\n\n${w}` });
  await h.put(bob, 'tenant-x', id, { markdown: `# bob\n\n${w}` });
  await h.settle();
  expect((await h.find(bob, w)).total).toBe(1);

  // Alice's session moves to the main index: its recent copy is retired, not Bob's.
  await h.handles.pool.query("INSERT INTO search_outbox (op, userId, projectId, sessionId) VALUES ('compact', ?, 'Tenant-X', ?)", [alice.user.id, id]);
  h.search.notify();
  await h.settle();
  expect(keys(await h.find(bob, w))).toEqual([`tenant-x/${id}`]);
  expect(keys(await h.find(alice, w))).toEqual([`Tenant-X/${id}`]);

  // Alice deletes her session: Bob's stays.
  await h.remove(alice, 'Tenant-X', id);
  await h.settle();
  expect((await h.find(alice, w)).total).toBe(0);
  const r = await h.find(bob, w);
  expect(r.total).toBe(1);
  expect(keys(r)).toEqual([`tenant-x/${id}`]);
}, 120_000);

test('one user with case-variant projects: each session is counted, excluded and deleted on its own', async () => {
  const carol = await h.user();
  const id = newSessionId();
  const w = word();
  // A large session (fragments) and a small one under keys that differ in case only.
  await h.put(carol, 'Mixed', id, { markdown: `# big\n\n${w}\n\n${'many more words in this long session '.repeat(3000)}` });
  await h.settle();
  await h.search.compact(0);
  await h.settle();
  // The second one is fresh (recent index) while the first is in the main index: the search
  // excludes from the main index what the recent one holds, exactly.
  await h.put(carol, 'mixed', id, { markdown: `# small\n\n${w}` });
  await h.settle();
  const both = await h.find(carol, w);
  expect(both.total).toBe(2);
  expect(keys(both)).toEqual([`Mixed/${id}`, `mixed/${id}`].sort());
  for (const hit of both.results) expect(hit.snippet).toContain(`<mark>${w}</mark>`);

  await h.remove(carol, 'mixed', id);
  await h.settle();
  const left = await h.find(carol, w);
  expect(left.total).toBe(1);
  expect(keys(left)).toEqual([`Mixed/${id}`]);
  expect((await h.fragments('Mixed', id)).length).toBeGreaterThan(1);
}, 120_000);

test('an index of the previous layout (no exact keys) is replaced by one rebuilt from the database, then deleted', async () => {
  const db = await createTestDatabase('sa_search');
  const id = newSessionId();
  const w = word();
  const old = await startSearchHarness({ db });
  const httpClient = createNodeHttpClient();
  const client = new Meilisearch({ host: old.config.meiliUrl!, apiKey: old.config.meiliMasterKey ?? undefined, httpClient });
  const legacy = `${db.name}_sessions_v2`;
  let next: SearchHarness | null = null;
  try {
    const dave = await old.user();
    await old.put(dave, 'Upgrade', id, { markdown: `# before the upgrade\n\n${w}` });
    await old.settle();
    // close() deletes this layout's indexes: as on a server that has only the previous layout's.
    await old.close();
    await client.createIndex(legacy, { primaryKey: 'id' }).waitTask(ENGINE_TASK_WAIT);
    await client.createIndex(recentUidOf(legacy), { primaryKey: 'id' }).waitTask(ENGINE_TASK_WAIT);

    next = await startSearchHarness({ db });
    const n = next;
    await n.eventually('the rebuilt index to find the session', async () => (await n.find(dave, w)).total === 1, 60_000);
    expect(keys(await n.find(dave, w))).toEqual([`Upgrade/${id}`]);
    // Deleted once the rebuild is done: the engine applies the deletion as a task of its own.
    const uids = async () => (await client.getIndexes({ limit: 1000 })).results.map((i) => i.uid);
    await n.eventually("the previous layout's indexes to be deleted", async () => {
      const now = await uids();
      return !now.includes(legacy) && !now.includes(recentUidOf(legacy));
    });
  } finally {
    await next?.close();
    for (const uid of [legacy, recentUidOf(legacy)]) await client.deleteIndex(uid).catch(() => undefined);
    httpClient.destroy();
    await db.drop();
  }
}, 120_000);
