/**
 * Standbys apply the outbox from their own cursors (src/search/sync/standby.ts), on real
 * Meilisearch processes started here (support/meili-engines.ts), stopped at the end, also on
 * failure:
 *
 * - under sustained writes through two service instances on one database (each runs the outbox
 *   worker; one at a time feeds the standby), a standby slowed down by a proxy that delays every
 *   request falls behind (search_standby_lag_seconds above 0 on /metrics) and, once the writes
 *   stop, holds the same documents as its primary within a minute, the metric back at 0 on both;
 * - a standby whose cursor is older than what the outbox retains is rebuilt from the database.
 */
import net from 'node:net';
import { Meilisearch } from 'meilisearch';
import { createMetrics } from '../../src/metrics';
import { createNodeHttpClient } from '../../src/search/engine/http-client';
import { recentUidOf } from '../../src/search/engine/index-settings';
import type { Ctx } from '../../src/services/context';
import { TestEngines } from '../support/meili-engines';
import { ENGINE_TASK_WAIT, newSessionId, startSearchHarness, type SearchHarness, randomWord } from '../support/meili-harness';
import { eventually } from '../support/eventually';

jest.setTimeout(240_000);

const word = () => randomWord(10);
const req = (c: Ctx): Ctx => ({ ...c, user: { ...c.user } });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * A TCP proxy on a free local port in front of `target`: every chunk a client sends is held
 * `delayMs` before it is passed on (in order), so each request to the engine behind it is that much
 * slower. close() ends every connection and the listener.
 */
async function slowProxy(target: string, delayMs: number): Promise<{ url: string; close: () => Promise<void> }> {
  const { hostname, port } = new URL(target);
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(port), hostname);
    sockets.add(client).add(upstream);
    let chain = Promise.resolve();
    client.on('data', (chunk) => {
      chain = chain.then(async () => {
        await sleep(delayMs);
        if (!upstream.destroyed) upstream.write(chunk);
      });
    });
    upstream.on('data', (chunk) => {
      if (!client.destroyed) client.write(chunk);
    });
    const end = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('close', end).on('error', end);
    upstream.on('close', end).on('error', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${address.port}`,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Every document of both indexes on an engine, as comparable lines (index, id, session, owner, name, content digest). */
async function documentsOn(url: string, key: string, indexUid: string): Promise<string[]> {
  const httpClient = createNodeHttpClient();
  try {
    const client = new Meilisearch({ host: url, apiKey: key, httpClient });
    const lines: string[] = [];
    for (const uid of [indexUid, recentUidOf(indexUid)]) {
      for (let offset = 0; ; offset += 1000) {
        const page = await client.index(uid).getDocuments({ fields: ['id', 'sessionId', 'userId', 'name', 'contentDigest'], limit: 1000, offset });
        for (const d of page.results) lines.push([uid, d.id, d.sessionId, d.userId, d.name, d.contentDigest].map(String).join(' '));
        if (page.results.length < 1000) break;
      }
    }
    return lines.sort();
  } finally {
    httpClient.destroy();
  }
}

/** A document the database does not hold, put straight into an engine's index: a rebuild from the database drops it. */
async function putMarker(url: string, key: string, uid: string, id: string): Promise<void> {
  const httpClient = createNodeHttpClient();
  try {
    const task = await new Meilisearch({ host: url, apiKey: key, httpClient })
      .index(uid)
      .addDocuments([{ id, sessionId: id, userId: 'marker' }])
      .waitTask(ENGINE_TASK_WAIT);
    expect(task.status).toBe('succeeded');
  } finally {
    httpClient.destroy();
  }
}

async function metricsText(h: SearchHarness): Promise<string> {
  const metrics = createMetrics(h.deps);
  try {
    return await metrics.registry.metrics();
  } finally {
    metrics.close();
  }
}

const lagOf = (text: string): number | null => {
  const m = /^search_standby_lag_seconds\{engine="0"\} (\S+)$/m.exec(text);
  return m ? Number(m[1]) : null;
};

let set: TestEngines;
let proxy: Awaited<ReturnType<typeof slowProxy>> | undefined;
let slow: SearchHarness | undefined;
let slowSecond: SearchHarness | undefined;
let short: SearchHarness | undefined;

beforeAll(async () => {
  // 0: the primary; 1: its standby, reached through the slow proxy; 2, 3: primary and standby of the retention test.
  set = await TestEngines.start(4);
});

afterAll(async () => {
  await slowSecond?.close().catch(() => undefined);
  await slow?.close().catch(() => undefined);
  await short?.close().catch(() => undefined);
  await proxy?.close().catch(() => undefined);
  await set?.stop();
});

test('a standby slower than its primary falls behind under sustained writes and converges within a minute after they stop', async () => {
  const [primary, standby] = set.urls(0, 2);
  proxy = await slowProxy(standby, 300);
  const env = { MEILI_URL: '', MEILI_URLS: primary, MEILI_STANDBY_URLS: proxy.url, MEILI_MASTER_KEY: set.key };
  slow = await startSearchHarness({ env });
  slowSecond = await startSearchHarness({ env, db: slow.db });
  const h = slow;
  const instances = [slow, slowSecond];
  const u = await h.user();
  const w = word();
  const ids: string[] = [];

  // Sustained writes for 15 s: new sessions, rewrites of earlier ones, deletions; the metric read as they go.
  const lags: number[] = [];
  let writing = true;
  const scrape = (async () => {
    while (writing) {
      const lag = lagOf(await metricsText(h));
      if (lag !== null) lags.push(lag);
      await sleep(250);
    }
  })();
  const until = Date.now() + 15_000;
  try {
    for (let i = 0; Date.now() < until; i++) {
      const via = instances[i % 2];
      if (i % 5 === 4 && ids.length > 2) {
        await via.remove(req(u), 'cursor-proj', ids.shift()!);
      } else if (i % 3 === 2 && ids.length > 0) {
        await via.put(req(u), 'cursor-proj', ids[ids.length - 1], { name: `rewritten ${i}`, markdown: `# rewritten ${i}\n\n${w} ${i}` });
      } else {
        const id = newSessionId();
        ids.push(id);
        await via.put(req(u), 'cursor-proj', id, { name: `session ${i}`, markdown: `# session ${i}\n\n${w} ${i}` });
      }
    }
  } finally {
    writing = false;
    await scrape;
  }
  // The standby was behind while the writes went on, and the metric said so.
  expect(lags.length).toBeGreaterThan(0);
  expect(Math.max(...lags)).toBeGreaterThan(0);

  // Within a minute of the last write: the same documents on both, the metric at 0.
  const primaryDocs = async () => documentsOn(primary, set.key, h.search.indexUid);
  await eventually(
    'the standby to hold what the primary holds, with no lag',
    async () => {
      if ((await h.search.backlog()) !== 0 || !(await h.search.standbysCaughtUp())) return false;
      if (lagOf(await metricsText(h)) !== 0) return false;
      const [a, b] = await Promise.all([primaryDocs(), documentsOn(standby, set.key, h.search.indexUid)]);
      return a.length > 0 && JSON.stringify(a) === JSON.stringify(b);
    },
    60_000,
  );
  for (const instance of instances) {
    expect(await instance.search.standbysCaughtUp()).toBe(true);
    const text = await metricsText(instance);
    expect(text).toContain('search_standby_lag_seconds{engine="0"} 0');
    expect(text).toContain('search_standby_in_sync{engine="0"} 1');
  }
  // What the database holds: the sessions not deleted, and only those.
  const sessions = new Set((await documentsOn(standby, set.key, h.search.indexUid)).map((l) => l.split(' ')[2]));
  expect([...sessions].sort()).toEqual([...ids].sort());
});

test('a standby whose cursor is older than what the outbox retains is rebuilt from the database', async () => {
  const [primary, standby] = set.urls(2, 4);
  short = await startSearchHarness({
    env: { MEILI_URL: '', MEILI_URLS: primary, MEILI_STANDBY_URLS: standby, MEILI_MASTER_KEY: set.key },
    standbyRetentionMs: 4_000,
    standbyGapGraceMs: 1_000,
  });
  const h = short;
  const u = await h.user();
  const w = word();
  const [kept, gone] = [newSessionId(), newSessionId()];
  await h.put(req(u), 'retained-proj', gone, { markdown: `# gone\n\n${w}` });
  await h.settle();
  await putMarker(standby, set.key, h.search.indexUid, 'marker-rebuilt');
  expect((await documentsOn(standby, set.key, h.search.indexUid)).join('\n')).toContain('marker-rebuilt');
  set.kill(3);
  try {
    await h.put(req(u), 'retained-proj', kept, { markdown: `# kept\n\n${w}` });
    await h.remove(req(u), 'retained-proj', gone);
    await h.settle();
    // The rows it has not applied are deleted after the retention bound: its cursor is no longer valid.
    await eventually('the standby’s cursor to expire', () => h.search.engineStatus()[0].standbyState === 'rebuilding', 30_000);
    expect(await h.search.backlog()).toBe(0);
  } finally {
    await set.revive(3);
  }
  await eventually('the standby to answer', () => h.search.engineStatus()[0].standbyUp === true, 30_000);
  await h.settle(60_000);
  expect(h.search.engineStatus()[0]).toMatchObject({ standbyUp: true, standbyState: 'in-sync', standbyLagSeconds: 0 });
  // Rebuilt: what the database does not hold is gone (the marker), what it holds is there.
  const onStandby = await documentsOn(standby, set.key, h.search.indexUid);
  expect(onStandby).toEqual(await documentsOn(primary, set.key, h.search.indexUid));
  expect([...new Set(onStandby.map((l) => l.split(' ')[2]))]).toEqual([kept]);
});
