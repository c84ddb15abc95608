/**
 * A unit of search work that fails 10 times moves to search_outbox_dead (metric
 * search_outbox_dead_total, `search outbox-retry`), and never holds back later work.
 */
import { retryDeadRows } from '../../src/data/outbox';
import type { OutboxWorker } from '../../src/search/sync/worker';
import { newSessionId, startSearchHarness, testWorker, type SearchHarness, randomWord } from '../support/meili-harness';

const word = () => randomWord();
const ids = (r: { results: Array<{ sessionId: string }> }) => r.results.map((x) => x.sessionId);

let h: SearchHarness;
let worker: OutboxWorker;
let closeWorker: () => void;

beforeAll(async () => {
  h = await startSearchHarness({ env: { WORKERS_ENABLED: 'false' } });
  ({ worker, close: closeWorker } = await testWorker(h));
}, 60_000);

afterAll(async () => {
  closeWorker?.();
  await h?.close();
});

/** Runs the worker until the outbox is empty, making retries due at once (time passing). */
async function drain(maxRounds = 40): Promise<void> {
  for (let i = 0; i < maxRounds && (await h.search.backlog()) > 0; i++) {
    await h.handles.pool.query('UPDATE search_outbox SET availableAt = NOW(3)');
    await worker.runOnce();
  }
}

/** Makes every push of the session fail: a corrupt stored row (a zero date the driver reads as null). */
async function corrupt(sessionId: string): Promise<void> {
  const c = await h.handles.pool.getConnection();
  try {
    await c.query("SET SESSION sql_mode = ''");
    await c.query("UPDATE sessions SET createdAt = '0000-00-00 00:00:00' WHERE id = ?", [sessionId]);
  } finally {
    await c.release();
  }
}

test('a failing row waiting for its retry does not hold back a later delete of the same session', async () => {
  const bob = await h.user();
  const poison = newSessionId();
  const w = word();
  await h.put(bob, 'held', poison, { markdown: `# poison\n\n${w}` });
  await drain();
  expect(ids(await h.find(bob, w))).toEqual([poison]);
  await corrupt(poison);
  await h.handles.pool.query("INSERT INTO search_outbox (op, userId, projectId, sessionId) VALUES ('upsert', ?, 'held', ?)", [bob.user.id, poison]);
  expect(await worker.runOnce()).toMatchObject({ claimed: 1, failed: 1 });

  // The owner deletes the session while the failed row waits for its retry: the delete goes first.
  await h.remove(bob, 'held', poison);
  expect(await worker.runOnce()).toEqual({ claimed: 1, applied: 1, failed: 0, deferred: 0 });
  expect(await h.find(bob, w)).toEqual({ total: 0, results: [] });
  await drain();
  expect(await h.search.backlog()).toBe(0);
}, 120_000);

test('a row that fails 10 times moves to search_outbox_dead; retried from there once repaired', async () => {
  const bob = await h.user();
  const poison = newSessionId();
  const good = newSessionId();
  await h.put(bob, 'dead', poison, { markdown: `# poison\n\n${word()}` });
  await drain();
  await corrupt(poison);
  await h.handles.pool.query("INSERT INTO search_outbox (op, userId, projectId, sessionId) VALUES ('upsert', ?, 'dead', ?)", [bob.user.id, poison]);
  const w = word();
  await h.put(bob, 'dead', good, { markdown: `# good\n\n${w}` });

  await drain();
  expect(await h.search.backlog()).toBe(0);
  expect(ids(await h.find(bob, w))).toEqual([good]);
  const dead = await h.handles.pool.query('SELECT op, sessionId, attempts, lastError FROM search_outbox_dead WHERE sessionId = ?', [poison]);
  expect(dead).toHaveLength(1);
  expect(dead[0]).toMatchObject({ op: 'upsert', sessionId: poison, attempts: 10 });
  expect(String(dead[0].lastError)).not.toBe('');
  expect(await h.search.deadLetters()).toBe(1);

  // Repaired, then retried from the dead-letter table: applied.
  await h.handles.pool.query('UPDATE sessions SET createdAt = NOW(3) WHERE id = ?', [poison]);
  expect(await retryDeadRows(h.handles)).toBe(1);
  expect(await h.search.deadLetters()).toBe(0);
  await drain();
  expect(await h.search.backlog()).toBe(0);
  expect(await h.search.deadLetters()).toBe(0);
}, 120_000);

test('a stale hit (the owner replaced the text, the index has not caught up) is not shown with the old text', async () => {
  const bob = await h.user();
  const id = newSessionId();
  const [old, fresh] = [word(), word()];
  await h.put(bob, 'stale', id, { markdown: `# v1\n\n${old}` });
  await drain();
  expect(ids(await h.find(bob, old))).toEqual([id]);
  // Replaced; no worker runs, so the index still holds the old text.
  await h.put(bob, 'stale', id, { markdown: `# v2\n\n${fresh}` });
  expect((await h.find(bob, old)).results).toEqual([]);
  await drain();
  const r = await h.find(bob, fresh);
  expect(ids(r)).toEqual([id]);
  expect(r.results[0].snippet).toContain(`<mark>${fresh}</mark>`);
}, 120_000);
