/**
 * The outbox worker with several service instances on one database and one index, and the
 * rebuild from the database.
 */
import { Meilisearch } from 'meilisearch';
import { documentIdOf, keyOf, sessionDigestOf } from '../../src/domain/search-documents';
import { ownedSessionsFilter } from '../../src/search/engine/filter';
import { createNodeHttpClient } from '../../src/search/engine/http-client';
import { recentUidOf } from '../../src/search/engine/index-settings';
import { IndexWriter } from '../../src/search/sync/index-writer';
import type { OutboxWorker } from '../../src/search/sync/worker';
import { Compaction } from '../../src/search/sync/compaction';
import { setupEngines } from '../../src/search/setup';
import { inlineOffload } from '../../src/offload';
import { sqlOn } from '../../src/data/sql';
import type { Ctx } from '../../src/services/context';
import { eventually } from '../support/eventually';
import { ENGINE_TASK_WAIT, engineUrlOf, newSessionId, startSearchHarness, testWorker, type SearchHarness, randomWord } from '../support/meili-harness';

/** A random lower-case word, far (in edits) from any other: typo tolerance cannot confuse two. */
const word = () => randomWord();
const ids = (r: { results: Array<{ sessionId: string }> }) => r.results.map((x) => x.sessionId);

let first: SearchHarness;
let second: SearchHarness;
let alice: Ctx;

/**
 * A test with a service instance whose own worker is off, and a test worker over its engines that
 * the test runs by hand; both closed after `body`, also when it fails.
 */
function idleWorkerTest(
  name: string,
  body: (idle: SearchHarness, worker: OutboxWorker) => Promise<void>,
  { batchSize, timeout = 60_000 }: { batchSize?: number; timeout?: number } = {},
): void {
  test(
    name,
    async () => {
      const idle = await startSearchHarness({ env: { WORKERS_ENABLED: 'false' } });
      try {
        const { worker, close } = await testWorker(idle, { batchSize });
        try {
          await body(idle, worker);
        } finally {
          close();
        }
      } finally {
        await idle.close();
      }
    },
    timeout,
  );
}

beforeAll(async () => {
  first = await startSearchHarness();
  // A second service instance on the same database: same index, its own worker.
  second = await startSearchHarness({ db: first.db });
  alice = await first.user();
}, 60_000);

afterAll(async () => {
  await second?.close();
  await first?.close();
});

test('two instances applying the outbox at once leave the index equal to the database', async () => {
  const sessions = Array.from({ length: 6 }, () => newSessionId());
  const versions = sessions.map(() => Array.from({ length: 6 }, () => word()));
  const aliceOnSecond: Ctx = { ...alice, deps: second.deps };

  // Each session is rewritten several times, alternating instances; sessions in parallel.
  await Promise.all(
    sessions.map(async (id, i) => {
      for (const [v, w] of versions[i].entries()) {
        const via = v % 2 === 0 ? first : second;
        await via.put(v % 2 === 0 ? alice : aliceOnSecond, 'conc', id, { markdown: `# v${v}\n\n${w}` });
      }
    }),
  );
  await first.settle();
  await second.settle();

  for (const [i, id] of sessions.entries()) {
    const latest = versions[i][versions[i].length - 1];
    const r = await first.find(alice, latest);
    expect(ids(r)).toEqual([id]);
    expect(r.total).toBe(1);
    for (const old of versions[i].slice(0, -1)) {
      expect(await first.find(alice, old)).toEqual({ total: 0, results: [] });
    }
  }
}, 120_000);

test('reindexAll rebuilds the index from the database, with progress', async () => {
  const kept = newSessionId();
  const keptWord = word();
  await first.put(alice, 'rebuild', kept, { markdown: `# kept\n\n${keptWord}` });
  await first.settle();

  // Damage the index behind the service's back: a session's documents lost, a stray document added.
  const httpClient = createNodeHttpClient();
  const client = new Meilisearch({ host: engineUrlOf(first.config, alice.user.id), apiKey: first.config.meiliMasterKey ?? undefined, httpClient });
  const index = client.index(first.search.indexUid);
  const strayWord = word();
  try {
    for (const uid of [first.search.indexUid, recentUidOf(first.search.indexUid)]) {
      await client
        .index(uid)
        .deleteDocuments({ filter: `sessionDigest = "${sessionDigestOf('rebuild', kept)}"` })
        .waitTask(ENGINE_TASK_WAIT);
    }
    const strayId = newSessionId();
    await index
      .addDocuments([
        {
          id: documentIdOf('rebuild', strayId, 1),
          sessionKey: `rebuild/${strayId}`,
          sessionDigest: sessionDigestOf('rebuild', strayId),
          projectDigest: keyOf('rebuild'),
          contentDigest: '',
          userId: alice.user.id,
          projectId: 'rebuild',
          sessionId: strayId,
          chunk: 1,
          name: 'stray',
          tags: [],
          llmModels: [],
          gitBranches: [],
          clientName: null,
          agentName: null,
          deviceId: null,
          createdAt: Date.now(),
          hasGitBranches: false,
          content: strayWord,
          hash: 'x',
          syncedAt: 0,
        },
      ])
      .waitTask(ENGINE_TASK_WAIT);
  } finally {
    httpClient.destroy();
  }
  expect((await first.find(alice, keptWord)).results).toEqual([]);
  // The stray document is counted by the engine but never returned (the database re-check).
  expect(await first.find(alice, strayWord)).toEqual({ total: 1, results: [] });

  const progress: Array<{ done: number; total: number }> = [];
  const result = await first.search.reindexAll((p) => progress.push(p));
  const sessionCount = Number((await first.handles.pool.query('SELECT COUNT(*) AS n FROM sessions'))[0].n);
  expect(result.sessions).toBe(sessionCount);
  expect(progress.length).toBeGreaterThan(0);
  const last = progress[progress.length - 1];
  expect(last.done).toBe(last.total);
  expect(last.total).toBeGreaterThanOrEqual(sessionCount);

  expect(ids(await first.find(alice, keptWord))).toEqual([kept]);
  expect(await first.find(alice, strayWord)).toEqual({ total: 0, results: [] });
}, 120_000);

test('backlog counts work not yet applied; a rebuild applies it without a running worker', async () => {
  const idle = await startSearchHarness({ env: { WORKERS_ENABLED: 'false' } });
  try {
    const bob = await idle.user();
    const id = newSessionId();
    const w = word();
    expect(await idle.search.backlog()).toBe(0);
    await idle.put(bob, 'backlog', id, { markdown: w });
    await idle.put(bob, 'backlog', newSessionId(), { markdown: word() });
    expect(await idle.search.backlog()).toBe(2);
    expect((await idle.find(bob, w)).results).toEqual([]);

    await idle.search.reindexAll();
    expect(await idle.search.backlog()).toBe(0);
    expect(ids(await idle.find(bob, w))).toEqual([id]);
  } finally {
    await idle.close();
  }
}, 60_000);

/** Writes a session, deletes `index` behind the service's back, and waits until the session is found again. */
async function loseIndexAndRecover(index: (mainUid: string) => string, project: string, expectUnavailable: boolean) {
  const id = newSessionId();
  const w = word();
  await first.put(alice, project, id, { markdown: `# ${project}\n\n${w}` });
  await first.settle();
  expect(ids(await first.find(alice, w))).toEqual([id]);

  const httpClient = createNodeHttpClient();
  try {
    const client = new Meilisearch({ host: engineUrlOf(first.config, alice.user.id), apiKey: first.config.meiliMasterKey ?? undefined, httpClient });
    await client.deleteIndex(index(first.search.indexUid)).waitTask(ENGINE_TASK_WAIT);
  } finally {
    httpClient.destroy();
  }
  if (expectUnavailable) await expect(first.find(alice, w)).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
  await first.eventually(
    `the session to be found again after losing ${index('<main>')}`,
    async () => {
      try {
        return ids(await first.find(alice, w)).includes(id);
      } catch {
        return false;
      }
    },
    30_000,
  );
}

test('an index lost by the engine (data reset) is recreated and rebuilt from the database', async () => {
  await loseIndexAndRecover((main) => main, 'reset', true);
}, 120_000);

test('a lost recent index is recreated and refilled with the sessions written lately', async () => {
  // The session is only in the recent index: found again only once that is refilled.
  await loseIndexAndRecover(recentUidOf, 'recent-reset', false);
}, 120_000);

test('a write for the recent index goes on when the main index cannot say whether it has the session: unmarked', async () => {
  const id = newSessionId();
  await first.put(alice, 'unmarked', id, { markdown: `# New\n\n${word()}` });
  await first.settle();
  const { engines, conns } = setupEngines(first.config, first.logger);
  const httpClient = createNodeHttpClient();
  try {
    const recent = new Meilisearch({ host: engineUrlOf(first.config, alice.user.id), apiKey: first.config.meiliMasterKey ?? undefined, httpClient }).index(
      recentUidOf(first.search.indexUid),
    );
    const mark = async () =>
      (await recent.getDocuments({ filter: `sessionDigest = "${sessionDigestOf('unmarked', id)}"`, fields: ['noMainCopy'] })).results.map(
        (d) => d.noMainCopy ?? null,
      );
    expect(await mark()).toEqual([true]); // new: the main index had no copy
    // The same recent index, beside a main index that is not there (lost, being recreated).
    const writer = new IndexWriter({
      conn: engines[0].primary.main,
      recentConn: engines[0].primary.recent,
      indexUid: `missing_${word()}`,
      recentUid: recentUidOf(first.search.indexUid),
      log: first.logger,
      offload: inlineOffload,
    });
    await writer.apply(sqlOn(first.handles.pool), [], [{ userId: alice.user.id, projectId: 'unmarked', sessionId: id }], Date.now());
    expect(await mark()).toEqual([null]);
  } finally {
    httpClient.destroy();
    conns.forEach((c) => c.close());
  }
});

idleWorkerTest(
  'a stream of writes is claimed in growing batches; a write alone in a small one',
  async (idle, worker) => {
    // What the fresh lane claimed, of how many it asked for.
    const claims: string[] = [];
    const runOnce = worker.runOnce.bind(worker);
    worker.runOnce = async (limit, lane) => {
      const r = await runOnce(limit, lane);
      if (lane === 'fresh' && r.claimed > 0) claims.push(`${r.claimed}/${limit}`);
      return r;
    };
    const claimed = () => claims.reduce((n, c) => n + Number(c.split('/')[0]), 0);
    // Rows are done before runOnce returns its claim: the outbox empty and every claim recorded.
    const applied = (rows: number) => eventually('the outbox applied', async () => claimed() >= rows && (await worker.backlog()) === 0, 30_000);
    try {
      const carol = await idle.user();
      const words = Array.from({ length: 20 }, () => word());
      const sessions = words.map(() => newSessionId());
      for (const [i, id] of sessions.entries()) await idle.put(carol, 'stream', id, { markdown: `# s${i}\n\n${words[i]}` });
      worker.start();
      await applied(20);
      // 20 rows in 4 claims (each full one doubles the next), not 10 of 2.
      expect(claims).toEqual(['2/2', '4/4', '8/8', '6/16']);
      const w = word();
      const single = newSessionId();
      await idle.put(carol, 'stream', single, { markdown: `# single\n\n${w}` });
      worker.notify();
      await applied(21);
      expect(claims.slice(4)).toEqual(['1/2']);
      expect(ids(await idle.find(carol, words[19]))).toEqual([sessions[19]]);
      expect(ids(await idle.find(carol, w))).toEqual([single]);
    } finally {
      await worker.stop();
    }
  },
  { batchSize: 2 },
);

idleWorkerTest('writes for the recent index and work for the main one are claimed by separate lanes', async (idle, worker) => {
  const bob = await idle.user();
  const [moved, fresh, big] = [newSessionId(), newSessionId(), newSessionId()];
  await idle.put(bob, 'lanes', moved, { markdown: `# moved\n\n${word()}` });
  await idle.search.reindexAll();
  // Main-index work queued first (a compaction, a session too large to be indexed whole), then
  // a write of a small session: it does not wait behind them.
  await idle.handles.pool.query("INSERT INTO search_outbox (op, userId, projectId, sessionId) VALUES ('compact', ?, 'lanes', ?)", [bob.user.id, moved]);
  await idle.put(bob, 'lanes', big, { markdown: `# big\n\n${'a long line of words here '.repeat(3000)}` });
  const w = word();
  await idle.put(bob, 'lanes', fresh, { markdown: `# fresh\n\n${w}` });
  expect((await idle.handles.pool.query('SELECT op FROM search_outbox ORDER BY id')).map((r: { op: string }) => r.op)).toEqual([
    'compact',
    'upsert_large',
    'upsert',
  ]);

  expect(await worker.runOnce(100, 'fresh')).toEqual({ claimed: 1, applied: 1, failed: 0, deferred: 0 });
  expect(ids(await idle.find(bob, w))).toEqual([fresh]);
  expect(await worker.runOnce(100, 'fresh')).toEqual({ claimed: 0, applied: 0, failed: 0, deferred: 0 });
  expect(await worker.runOnce(100, 'main')).toEqual({ claimed: 2, applied: 2, failed: 0, deferred: 0 });
  expect(await idle.search.backlog()).toBe(0);
});

idleWorkerTest('work for a session that another worker holds waits for it (one session is never pushed twice at once)', async (idle, worker) => {
  const other = await idle.handles.pool.getConnection();
  try {
    const bob = await idle.user();
    const id = newSessionId();
    const [v1, v2] = [word(), word()];
    await idle.put(bob, 'held', id, { markdown: `# v1\n\n${v1}` });
    const [{ id: heldRow }] = await idle.handles.pool.query('SELECT id FROM search_outbox WHERE sessionId = ?', [id]);

    // Another worker has claimed the first row and is still applying it.
    await other.beginTransaction();
    await other.query('SELECT id FROM search_outbox WHERE id = ? FOR UPDATE', [heldRow]);
    await idle.put(bob, 'held', id, { markdown: `# v2\n\n${v2}` });

    expect(await worker.runOnce()).toEqual({ claimed: 1, applied: 0, failed: 0, deferred: 1 });
    expect(await idle.search.backlog()).toBe(2);
    expect((await idle.find(bob, v2)).results).toEqual([]);

    await other.rollback();
    expect(await worker.runOnce()).toEqual({ claimed: 2, applied: 2, failed: 0, deferred: 0 });
    expect(await idle.search.backlog()).toBe(0);
    expect(ids(await idle.find(bob, v2))).toEqual([id]);
    expect((await idle.find(bob, v1)).results).toEqual([]);
  } finally {
    await other.release();
  }
});

idleWorkerTest('a compaction asked for again before the first is applied queues each session once', async (idle, worker) => {
  const bob = await idle.user();
  const sessions = Array.from({ length: 3 }, () => newSessionId());
  for (const id of sessions) await idle.put(bob, 'twice', id, { markdown: `# ${id}\n\n${word()}` });
  expect((await worker.runOnce(100, 'fresh')).applied).toBe(sessions.length);
  const queued = async () =>
    (await idle.handles.pool.query("SELECT sessionId FROM search_outbox WHERE op = 'compact' AND userId = ? AND doneAt IS NULL", [bob.user.id])).map(
      (r: { sessionId: string }) => r.sessionId,
    );

  expect(await idle.search.compact()).toBe(sessions.length);
  expect(await idle.search.compact()).toBe(0);
  expect((await queued()).sort()).toEqual([...sessions].sort());
  // Once applied, the sessions are in the main index; a later compaction has nothing of them to move.
  expect((await worker.runOnce(100, 'main')).applied).toBe(sessions.length);
  expect(await queued()).toEqual([]);
  expect(await idle.search.compact()).toBe(0);
});

idleWorkerTest('a recent index holding many sessions with a main copy is compacted early; new sessions do not count', async (idle, worker) => {
  const { engines, conns } = setupEngines(idle.config, idle.logger);
  try {
    const bob = await idle.user();
    // Due neither by time nor by size: only by the four documents whose sessions have a main copy.
    const compactIfDue = (settledMs: number) =>
      Promise.all(
        engines.map((e) =>
          new Compaction({
            db: sqlOn(idle.handles.pool),
            recentConn: e.primary.recent,
            recentUid: recentUidOf(idle.search.indexUid),
            log: idle.logger,
            notify: () => undefined,
            everyMs: Number.MAX_SAFE_INTEGER,
            recentMax: 1000,
            shadowingMax: 4,
            settledMs,
          }).compactIfDue(),
        ),
      );
    const queued = async () => Number((await idle.handles.pool.query("SELECT COUNT(*) AS n FROM search_outbox WHERE op = 'compact' AND doneAt IS NULL"))[0].n);
    const sessions = Array.from({ length: 4 }, () => newSessionId());
    const write = async (v: string) => {
      for (const id of sessions) await idle.put(bob, 'early', id, { markdown: `# ${v}\n\n${word()}` });
      expect((await worker.runOnce(100, 'fresh')).applied).toBe(sessions.length);
    };

    await write('new'); // no main copy: marked, left out of no search
    await compactIfDue(0);
    expect(await queued()).toBe(0);

    expect(await idle.search.compact()).toBe(sessions.length);
    expect((await worker.runOnce(100, 'main')).applied).toBe(sessions.length);
    await write('updated'); // now shadowing their main copies
    await compactIfDue(60_000); // written this minute: live sessions, not moved yet
    expect(await queued()).toBe(0);
    await compactIfDue(0);
    expect(await queued()).toBe(sessions.length);
  } finally {
    conns.forEach((c) => c.close());
  }
});

idleWorkerTest(
  'a compaction of more sessions than one database read goes to the main index as one engine task, and retires every recent copy',
  async (idle, worker) => {
    const httpClient = createNodeHttpClient();
    try {
      const bob = await idle.user();
      const shared = word();
      // More than the 200 sessions read per statement: before, each read was pushed and waited for alone.
      const sessions = Array.from({ length: 230 }, () => newSessionId());
      for (const id of sessions) await idle.put(bob, 'bulk', id, { markdown: `# ${id}\n\n${shared} ${word()}` });
      expect((await worker.runOnce(1000, 'fresh')).applied).toBe(sessions.length);

      const key = idle.config.meiliMasterKey ?? undefined;
      const main = new Meilisearch({ host: engineUrlOf(idle.config, bob.user.id), apiKey: key, httpClient });
      const recent = new Meilisearch({ host: idle.config.meiliRecentUrl ?? engineUrlOf(idle.config, bob.user.id), apiKey: key, httpClient });
      const recentUid = recentUidOf(idle.search.indexUid);
      const refs = sessions.map((sessionId) => ({ userId: bob.user.id, projectId: 'bulk', sessionId }));
      const inBulk = { filter: ownedSessionsFilter(refs), fields: ['id'], limit: 1000 };
      expect((await recent.index(recentUid).getDocuments(inBulk)).results).toHaveLength(sessions.length);
      const before = (await main.tasks.getTasks({ indexUids: [idle.search.indexUid], limit: 1 })).results[0]?.uid ?? -1;

      await idle.handles.pool.batch(
        "INSERT INTO search_outbox (op, userId, projectId, sessionId) VALUES ('compact', ?, ?, ?)",
        refs.map((r) => [r.userId, r.projectId, r.sessionId]),
      );
      expect(await worker.runOnce(100, 'main')).toEqual({ claimed: sessions.length, applied: sessions.length, failed: 0, deferred: 0 });

      const tasks = await main.tasks.getTasks({ indexUids: [idle.search.indexUid], types: ['documentAdditionOrUpdate'], limit: 100 });
      const added = tasks.results.filter((t) => t.uid > before);
      expect(added.map((t) => t.details?.receivedDocuments)).toEqual([sessions.length]);
      expect((await recent.index(recentUid).getDocuments(inBulk)).results).toEqual([]);
      expect((await idle.find(bob, shared, undefined, 1)).total).toBe(sessions.length);
    } finally {
      httpClient.destroy();
    }
  },
  { timeout: 120_000 },
);
