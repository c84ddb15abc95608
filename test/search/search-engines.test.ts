/**
 * Several engines (MEILI_URLS) with standbys (MEILI_STANDBY_URLS), on real Meilisearch processes
 * started here (support/meili-engines.ts) and stopped at the end, also on failure:
 *
 * - the same corpus, where one user's scopes (personal and two teams) are on different engines,
 *   gives the same pages (ids, order, totals) on one engine and on two;
 * - a project moved between owners on different engines leaves its former engine and is found on
 *   the new one;
 * - a killed primary: the next search succeeds at once on its standby;
 * - a standby that is down does not hold back indexing, and catches up from its cursor when it is
 *   back (not rebuilt);
 * - a search asks only the engines holding the caller's scopes.
 */
import { Meilisearch } from 'meilisearch';
import { sessionDigestOf } from '../../src/domain/search-documents';
import { AppError } from '../../src/errors';
import { createMetrics } from '../../src/metrics';
import { meiliString } from '../../src/search/engine/filter';
import { createNodeHttpClient } from '../../src/search/engine/http-client';
import { recentUidOf } from '../../src/search/engine/index-settings';
import { engineOf } from '../../src/search/engine/placement';
import { operatorCtx, type Ctx } from '../../src/services/context';
import { createProject, moveProject } from '../../src/services/projects';
import { createTeam } from '../../src/services/teams';
import { TestEngines } from '../support/meili-engines';
import { ENGINE_TASK_WAIT, newSessionId, startSearchHarness, type SearchHarness, randomWord } from '../support/meili-harness';
import { eventually } from '../support/eventually';

jest.setTimeout(120_000);

const word = () => randomWord(10);
const req = (c: Ctx): Ctx => ({ ...c, user: { ...c.user } });
/** Session ids (UUIDs) by a name of the test's. */
const ids = new Map<string, string>();
const sid = (name: string) => ids.get(name) ?? (ids.set(name, newSessionId()), ids.get(name)!);

let set: TestEngines;
/** Two engines (0, 1) with standbys (2, 3). */
let two: SearchHarness;
/** One engine (4), same corpus, a database of its own. */
let one: SearchHarness;

beforeAll(async () => {
  set = await TestEngines.start(5);
  const urls = set.urls();
  const key = set.key;
  two = await startSearchHarness({
    env: { MEILI_URL: '', MEILI_URLS: urls.slice(0, 2).join(','), MEILI_STANDBY_URLS: urls.slice(2, 4).join(','), MEILI_MASTER_KEY: key },
  });
  one = await startSearchHarness({ env: { MEILI_URL: urls[4], MEILI_MASTER_KEY: key } });
});

afterAll(async () => {
  await two?.close().catch(() => undefined);
  await one?.close().catch(() => undefined);
  await set?.stop();
});

/** A team of `admin`'s. */
const team = async (h: SearchHarness, admin: Ctx) => (await createTeam(operatorCtx(h.handles), { name: `team ${word()}` }, admin.user.id)).id;

/** A user whose own scope is on engine `position` of two. */
async function userOn(h: SearchHarness, position: number): Promise<Ctx> {
  for (;;) {
    const u = await h.user();
    if (engineOf(u.user.id, 2) === position) return u;
  }
}

/** A team of `admin`'s on engine `position` of two. */
async function teamOn(h: SearchHarness, admin: Ctx, position: number): Promise<string> {
  for (;;) {
    const id = await team(h, admin);
    if (engineOf(id, 2) === position) return id;
  }
}

/** The owners (userId) under which an engine holds a session, in both indexes. */
async function ownersOn(url: string, h: SearchHarness, projectId: string, sessionId: string): Promise<string[]> {
  const httpClient = createNodeHttpClient();
  try {
    const client = new Meilisearch({ host: url, apiKey: set.key, httpClient });
    const owners: string[] = [];
    for (const uid of [h.search.indexUid, recentUidOf(h.search.indexUid)]) {
      const page = await client
        .index(uid)
        .getDocuments({ filter: `sessionDigest = ${meiliString(sessionDigestOf(projectId, sessionId))}`, fields: ['userId'], limit: 1000 })
        .catch(() => ({ results: [] as Array<{ userId: string }> }));
      owners.push(...page.results.map((d) => String(d.userId)));
    }
    return [...new Set(owners)];
  } finally {
    httpClient.destroy();
  }
}

/** `w` with `n` letters replaced (not the first: that costs more), i.e. `n` typos away. */
const typos = (w: string, n: number) => [...w].map((c, i) => ((n >= 1 && i === 4) || (n >= 2 && i === 7) ? (c === 'q' ? 'z' : 'q') : c)).join('');

/**
 * Session `i` of the corpus: `w` (then `w2`) in the name or in the markdown, 0–2 typos away, after
 * 0–2 other words (further ones rank as the third). Each of the 18 combinations ranks differently (typo, attribute, position), so the
 * comparison of orders below compares the ranking, not a tie-break.
 */
const CORPUS = 18;

function corpusSession(i: number, w: string, w2: string): { name: string; markdown: string } {
  const inName = i % 2 === 0;
  const phrase = `${'lorem '.repeat(Math.floor(i / 6))}${typos(w, Math.floor(i / 2) % 3)} ${w2}`;
  return inName ? { name: phrase, markdown: '# notes\n\nnothing to see' } : { name: 'notes', markdown: `${phrase}\n\nmore text` };
}

describe('one engine and two give the same pages', () => {
  const W = word();
  const W2 = word();
  /** Per harness: the user searching (personal scope and two teams, on both engines in `two`). */
  const users = new Map<SearchHarness, Ctx>();

  beforeAll(async () => {
    for (const h of [two, one]) {
      const u = h === two ? await userOn(h, 0) : await h.user();
      const teams = h === two ? [await teamOn(h, u, 1), await teamOn(h, u, 0)] : [await team(h, u), await team(h, u)];
      const scopes = [
        { projectId: 'own-proj', teamId: null },
        { projectId: 'team-a-proj', teamId: teams[0] },
        { projectId: 'team-b-proj', teamId: teams[1] },
      ];
      for (const s of scopes) if (s.teamId) await createProject(req(u), { id: s.projectId, name: s.projectId, teamId: s.teamId });
      for (let i = 0; i < CORPUS; i++) {
        const s = scopes[i % 3];
        await h.put(req(u), s.projectId, `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`, corpusSession(i, W, W2));
      }
      users.set(h, u);
      await h.settle();
    }
  });

  test('the caller’s scopes are on both engines', () => {
    const u = users.get(two)!;
    expect(engineOf(u.user.id, 2)).toBe(0);
  });

  test.each([
    [W, 0, 10],
    [W, 5, 7],
    [W, 12, 10],
    [`${W} ${W2}`, 0, 18],
    [`${W} ${W2}`, 3, 4],
  ])('query %#: %s, offset %i, limit %i', async (q, offset, limit) => {
    const page = async (h: SearchHarness) => {
      const r = await h.find(req(users.get(h)!), q, undefined, limit, offset);
      return { total: r.total, ids: r.results.map((x) => `${x.projectId}/${x.sessionId}`), ranks: r.results.map((x) => x.rank) };
    };
    const [a, b] = [await page(one), await page(two)];
    expect(a.total).toBe(CORPUS);
    expect(b).toEqual(a);
    // Distinct scores: the order compared above is the ranking's, not a tie-break's.
    expect(new Set(a.ranks).size).toBe(a.ranks.length);
  });

  test('also after everything moved into the main index', async () => {
    await two.search.compact(0);
    await two.settle();
    const r1 = await one.find(req(users.get(one)!), W, undefined, CORPUS, 0);
    const r2 = await two.find(req(users.get(two)!), W, undefined, CORPUS, 0);
    expect(r2.results.map((x) => `${x.projectId}/${x.sessionId}`)).toEqual(r1.results.map((x) => `${x.projectId}/${x.sessionId}`));
    expect(r2.total).toBe(r1.total);
  });
});

test('a project moved to an owner on the other engine leaves its former engine and is found on the new one', async () => {
  const w = word();
  const a = await userOn(two, 0);
  const teamId = await teamOn(two, a, 1);
  const [e0, e1] = set.urls(0, 2);
  await two.put(req(a), 'moving-proj', sid('m1'), { markdown: `# moving\n\n${w}` });
  await two.settle();
  expect(await ownersOn(e0, two, 'moving-proj', sid('m1'))).toEqual([a.user.id]);
  expect(await ownersOn(e1, two, 'moving-proj', sid('m1'))).toEqual([]);

  await moveProject(req(a), 'moving-proj', { teamId });
  await two.settle();
  expect(await ownersOn(e0, two, 'moving-proj', sid('m1'))).toEqual([]);
  expect(await ownersOn(e1, two, 'moving-proj', sid('m1'))).toEqual([teamId]);
  // The standbys follow.
  expect(await ownersOn(set.urls()[2], two, 'moving-proj', sid('m1'))).toEqual([]);
  expect(await ownersOn(set.urls()[3], two, 'moving-proj', sid('m1'))).toEqual([teamId]);
  const r = await two.find(req(a), w);
  expect(r.results.map((x) => x.sessionId)).toEqual([sid('m1')]);
  expect(r.total).toBe(1);

  // And back to the user.
  await moveProject(req(a), 'moving-proj', { teamId: null });
  await two.settle();
  expect(await ownersOn(e0, two, 'moving-proj', sid('m1'))).toEqual([a.user.id]);
  expect(await ownersOn(e1, two, 'moving-proj', sid('m1'))).toEqual([]);
  expect((await two.find(req(a), w)).total).toBe(1);
});

/** A document the database does not hold, put straight into an engine's index: a rebuild from the database would drop it, catching up does not. */
async function putMarker(url: string, uid: string, id: string): Promise<void> {
  const httpClient = createNodeHttpClient();
  try {
    const task = await new Meilisearch({ host: url, apiKey: set.key, httpClient })
      .index(uid)
      .addDocuments([{ id, userId: 'marker' }])
      .waitTask(ENGINE_TASK_WAIT);
    expect(task.status).toBe('succeeded');
  } finally {
    httpClient.destroy();
  }
}

async function hasDocument(url: string, uid: string, id: string): Promise<boolean> {
  const httpClient = createNodeHttpClient();
  try {
    return (await new Meilisearch({ host: url, apiKey: set.key, httpClient }).index(uid).getDocuments({ filter: `userId = 'marker'`, limit: 10 })).results.some(
      (d) => d.id === id,
    );
  } finally {
    httpClient.destroy();
  }
}

test('a standby that is down does not hold back indexing; it catches up from its cursor when it is back', async () => {
  const w = word();
  const u = await userOn(two, 0);
  await two.put(req(u), 'sb-proj', sid('before'), { markdown: `# before\n\n${w}` });
  await two.settle();
  await putMarker(set.urls()[2], two.search.indexUid, 'marker-caught-up');
  expect(await hasDocument(set.urls()[2], two.search.indexUid, 'marker-caught-up')).toBe(true);
  set.kill(2);
  try {
    await two.put(req(u), 'sb-proj', sid('during'), { markdown: `# during\n\n${w}` });
    await two.remove(req(u), 'sb-proj', sid('before'));
    // Applied on the primary while its standby is gone.
    await two.settle();
    expect((await two.find(req(u), w)).results.map((x) => x.sessionId)).toEqual([sid('during')]);
    expect(two.search.engineStatus()[0]).toMatchObject({ primaryUp: true, standbyState: 'behind' });
  } finally {
    await set.revive(2);
  }
  await eventually(
    'the standby to catch up',
    async () => (await two.search.standbysCaughtUp()) && two.search.engineStatus()[0].standbyState === 'in-sync',
    60_000,
  );
  expect(two.search.engineStatus()[0].standbyLagSeconds).toBe(0);
  expect(await ownersOn(set.urls()[2], two, 'sb-proj', sid('during'))).toEqual([u.user.id]);
  // The deletion made while it was down was applied from the outbox too.
  expect(await ownersOn(set.urls()[2], two, 'sb-proj', sid('before'))).toEqual([]);
  // Caught up, not rebuilt: what it held besides is still there.
  expect(await hasDocument(set.urls()[2], two.search.indexUid, 'marker-caught-up')).toBe(true);
});

test('a killed primary: the next search is answered by its standby at once; the primary comes back when it answers', async () => {
  const w = word();
  const u = await userOn(two, 1);
  // Ranked apart (the word in one's name): the engine orders tied documents by its own ids, which
  // a standby applying the same writes in other batches may give in another order.
  await two.put(req(u), 'fo-proj', sid('f1'), { markdown: `# failover\n\n${w}` });
  await two.put(req(u), 'fo-proj', sid('f2'), { name: `failover ${w}`, markdown: `# failover\n\n${w} ${w}` });
  await two.settle();
  const before = await two.find(req(u), w);
  expect(before.total).toBe(2);
  expect(before.results.map((x) => x.sessionId)).toEqual([sid('f2'), sid('f1')]);
  set.kill(1);
  try {
    const t0 = Date.now();
    // One attempt, no retry loop: the failed request to the primary is retried on the standby.
    const after = await two.find(req(u), w);
    const took = Date.now() - t0;
    expect(after.results.map((x) => x.sessionId)).toEqual(before.results.map((x) => x.sessionId));
    expect(after.total).toBe(2);
    // A generous bound (not a performance check): failing over never waits for a health-check cycle or a 5 s timeout.
    expect(took).toBeLessThan(2_000 * 5);
    expect(two.search.engineStatus()[1]).toMatchObject({ primaryUp: false, standbyUp: true });
    const metrics = createMetrics(two.deps);
    try {
      const text = await metrics.registry.metrics();
      expect(text).toContain('search_engine_up{engine="1",role="primary"} 0');
      expect(text).toContain('search_engine_up{engine="1",role="standby"} 1');
      expect(text).toContain('search_engine_up{engine="0",role="primary"} 1');
      expect(text).toContain('search_standby_in_sync{engine="1"} 1');
    } finally {
      metrics.close();
    }
    // Searches keep working while it is down.
    expect((await two.find(req(u), w)).total).toBe(2);
    expect(two.search.isHealthy()).toBe(true);
  } finally {
    await set.revive(1);
  }
  await eventually('the primary to be back', () => two.search.engineStatus()[1].primaryUp, 30_000);
});

test('a search asks only the engines that hold the caller’s scopes', async () => {
  const w = word();
  const only0 = await userOn(two, 0);
  const on1 = await userOn(two, 1);
  await two.put(req(only0), 'fan-proj', sid('x1'), { markdown: `# fan\n\n${w}` });
  await two.put(req(on1), 'fan-proj-b', sid('y1'), { markdown: `# fan\n\n${w}` });
  await two.settle();
  // Engine 1 and its standby gone: a caller whose scopes are all on engine 0 does not notice.
  set.kill(1);
  set.kill(3);
  try {
    const r = await two.find(req(only0), w);
    expect(r.results.map((x) => x.sessionId)).toEqual([sid('x1')]);
    await expect(two.find(req(on1), w)).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
    expect(await two.find(req(on1), w).catch((e: unknown) => e)).toBeInstanceOf(AppError);
  } finally {
    await set.revive(1);
    await set.revive(3);
  }
  await eventually('engine 1 to be back', () => two.search.engineStatus()[1].primaryUp && two.search.engineStatus()[1].standbyUp === true, 30_000);
  expect((await two.find(req(on1), w)).total).toBe(1);
});
