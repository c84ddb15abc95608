/**
 * Word counts remembered for a short while (src/search/engine/count-cache.ts): asked once per
 * engine, index, filter and query within COUNT_TTL_MS; zeros never remembered, so a session written
 * a moment ago is found by a word nobody held before. Beside them, whether a filter's searches find
 * large sessions: their listing is then sent with the page, and totals stay exact either way.
 */
import { Index } from 'meilisearch';
import * as countCache from '../../src/search/engine/count-cache';
import * as heldModule from '../../src/search/engine/held-sessions';
import { COUNT_TTL_MS, countsThrough, forgetCounts, largeSessionsFound, largeSessionsLikely, type CountQuery } from '../../src/search/engine/count-cache';
import { recentUidOf } from '../../src/search/engine/index-settings';
import { relatedSessions } from '../../src/services/related';
import { searchSessions } from '../../src/services/search';
import { again, harnessForTests, newSessionId, randomWord } from '../support/meili-harness';

describe('countsThrough', () => {
  const asked: CountQuery[][] = [];
  const answers = new Map<string, number>();
  const ask = (missing: CountQuery[]) => {
    asked.push(missing);
    return Promise.resolve(missing.map((x) => answers.get(x.q) ?? 0));
  };
  const q = (text: string, filter = 'ownerId = "a"'): CountQuery => ({ indexUid: 'sessions', q: text, filter });

  beforeEach(() => {
    forgetCounts();
    asked.length = 0;
    answers.clear();
  });
  afterEach(() => jest.useRealTimers());

  test('asks only what it does not remember, in order; with everything remembered, nothing', async () => {
    answers.set('', 10).set('alpha', 3).set('beta', 2);
    expect(await countsThrough('h1', [q(''), q('alpha')], ask)).toEqual([10, 3]);
    expect(await countsThrough('h1', [q(''), q('beta'), q('alpha')], ask)).toEqual([10, 2, 3]);
    expect(await countsThrough('h1', [q('alpha'), q('beta')], ask)).toEqual([3, 2]);
    expect(asked.map((a) => a.map((x) => x.q))).toEqual([['', 'alpha'], ['beta']]);
  });

  test('a zero is asked again every time; another filter, index or engine is another count', async () => {
    answers.set('alpha', 3);
    await countsThrough('h1', [q('alpha'), q('gamma')], ask);
    answers.set('gamma', 1);
    expect(await countsThrough('h1', [q('alpha'), q('gamma')], ask)).toEqual([3, 1]);
    await countsThrough('h1', [q('alpha', 'ownerId = "b"')], ask);
    await countsThrough('h2', [q('alpha')], ask);
    await countsThrough('h1', [{ ...q('alpha'), indexUid: 'recent' }], ask);
    expect(asked.map((a) => a.map((x) => `${x.indexUid}:${x.q}:${x.filter}`))).toEqual([
      ['sessions:alpha:ownerId = "a"', 'sessions:gamma:ownerId = "a"'],
      ['sessions:gamma:ownerId = "a"'],
      ['sessions:alpha:ownerId = "b"'],
      ['sessions:alpha:ownerId = "a"'],
      ['recent:alpha:ownerId = "a"'],
    ]);
  });

  test('a count older than COUNT_TTL_MS is asked again', async () => {
    jest.useFakeTimers({ now: new Date('2026-11-29T10:00:00Z'), doNotFake: ['setImmediate', 'nextTick'] });
    answers.set('alpha', 3);
    await countsThrough('h1', [q('alpha')], ask);
    jest.setSystemTime(Date.now() + COUNT_TTL_MS - 1);
    await countsThrough('h1', [q('alpha')], ask);
    expect(asked).toHaveLength(1);
    answers.set('alpha', 4);
    jest.setSystemTime(Date.now() + 2);
    expect(await countsThrough('h1', [q('alpha')], ask)).toEqual([4]);
    expect(asked).toHaveLength(2);
  });
});

describe('largeSessionsLikely', () => {
  beforeEach(() => forgetCounts());
  afterEach(() => jest.useRealTimers());

  test('remembered per index and filter for COUNT_TTL_MS, and forgotten with the counts', () => {
    jest.useFakeTimers({ now: new Date('2026-12-01T10:00:00Z'), doNotFake: ['setImmediate', 'nextTick'] });
    expect(largeSessionsLikely('sessions', 'userId = "a"')).toBe(false);
    largeSessionsFound('sessions', 'userId = "a"');
    expect(largeSessionsLikely('sessions', 'userId = "a"')).toBe(true);
    expect(largeSessionsLikely('sessions', 'userId = "b"')).toBe(false);
    expect(largeSessionsLikely('recent', 'userId = "a"')).toBe(false);
    jest.setSystemTime(Date.now() + COUNT_TTL_MS - 1);
    expect(largeSessionsLikely('sessions', 'userId = "a"')).toBe(true);
    jest.setSystemTime(Date.now() + 2);
    expect(largeSessionsLikely('sessions', 'userId = "a"')).toBe(false);
    largeSessionsFound('sessions', 'userId = "a"');
    forgetCounts();
    expect(largeSessionsLikely('sessions', 'userId = "a"')).toBe(false);
  });
});

describe('through a search', () => {
  const harness = harnessForTests();

  const word = () => randomWord();
  const ids = (r: { results: Array<{ sessionId: string }> }) => r.results.map((x) => x.sessionId);

  /** The indexes whose word counts are asked ('main', 'recent'), sorted, since the last `take`. */
  const countedIndexes = (mainUid: string) => {
    let asked: string[] = [];
    const real = countCache.engineCounts;
    const spy = jest.spyOn(countCache, 'engineCounts').mockImplementation((client, queries, requests) => {
      asked.push(queries[0].indexUid === mainUid ? 'main' : 'recent');
      return real(client, queries, requests);
    });
    const take = () => {
      const sorted = [...asked].sort();
      asked = [];
      return sorted;
    };
    return { take, restore: () => spy.mockRestore() };
  };

  test('a word nobody held finds the session written with it right after, its other word still counted from before', async () => {
    const h = harness();
    const user = await h.user();
    const [held, fresh, nowhere] = [word(), word(), word()];
    const older = [newSessionId(), newSessionId()];
    for (const id of older) await h.put(user, 'counts', id, { name: 'older', markdown: `# Older\n\nSomething about ${held}.\n` });
    await h.settle();
    expect([...ids(await searchSessions(again(user), { query: `${held} ${fresh}` }))].sort()).toEqual([...older].sort());
    expect(ids(await searchSessions(again(user), { query: `${fresh} ${nowhere}` }))).toEqual([]);
    const both = newSessionId();
    await h.put(user, 'counts', both, { name: 'both', markdown: `# Both\n\n${held} and ${fresh} together.\n` });
    await h.settle();
    const found = ids(await searchSessions(again(user), { query: `${held} ${fresh}` }));
    expect(found[0]).toBe(both);
    expect([...found].sort()).toEqual([both, ...older].sort());
    expect(ids(await searchSessions(again(user), { query: `${fresh} ${nowhere}` }))).toEqual([both]);
    // Another user holding neither word finds nothing (their counts are their own).
    const other = await h.user();
    expect(ids(await searchSessions(again(other), { query: `${held} ${fresh}` }))).toEqual([]);
  });

  test('while the recent index holds none of the caller’s sessions its counts are not asked; a session written since is found at once by a word only it holds', async () => {
    const h = harness();
    const user = await h.user();
    const [held, fresh] = [word(), word()];
    const older = newSessionId();
    await h.put(user, 'recent-none', older, { markdown: `# Older\n\nSomething about ${held}.\n` });
    await h.settle();
    await h.search.compact(0);
    await h.settle();
    forgetCounts();
    // The indexes whose counts each search asks for.
    const counting = countedIndexes(h.search.indexUid);
    // How often each search read what the recent index holds of the caller (more than one request).
    let reads = 0;
    const realHeld = heldModule.heldSessions;
    const reading = jest.spyOn(heldModule, 'heldSessions').mockImplementation((...args) => {
      reads++;
      return realHeld(...args);
    });
    const search = async (query: string) => {
      counting.take();
      reads = 0;
      return { found: ids(await searchSessions(again(user), { query })), asked: counting.take() };
    };
    try {
      // Not known yet: both indexes' counts; from then on the main index's only.
      expect(await search(`${held} ${fresh}`)).toEqual({ found: [older], asked: ['main', 'recent'] });
      expect(reads).toBe(1);
      // Nor is what it holds read: one request says it still holds none.
      expect(await search(`${held} ${fresh}`)).toEqual({ found: [older], asked: ['main'] });
      expect(reads).toBe(0);
      // A session written since, in the recent index: the search that left its counts out is
      // asked again with them, and finds it by the word nobody held before.
      const both = newSessionId();
      await h.put(user, 'recent-none', both, { markdown: `# Fresh\n\nOnly ${fresh} here.\n` });
      await h.settle();
      const after = await search(`${held} ${fresh}`);
      expect([...after.found].sort()).toEqual([both, older].sort());
      expect(after.asked).toEqual(['main', 'main', 'recent']);
      expect(reads).toBe(1);
      // Known now: both indexes' counts asked at once.
      expect((await search(`${held} ${fresh}`)).asked).toEqual(['main', 'recent']);
      expect(reads).toBe(1);
      // Moved to the main index: the recent index holds none of them again, and a search says so.
      await h.search.compact(0);
      await h.settle();
      expect([...(await search(`${held} ${fresh}`)).found].sort()).toEqual([both, older].sort());
      expect((await search(`${held} ${fresh}`)).asked).toEqual(['main']);
      expect(reads).toBe(0);
      // A one-word search (no counts) right after an upload still finds it, what is held read once.
      const third = newSessionId();
      const alone = word();
      await h.put(user, 'recent-none', third, { markdown: `# Third\n\nOnly ${alone} here.\n` });
      await h.settle();
      expect(await search(alone)).toEqual({ found: [third], asked: [] });
      expect(reads).toBe(1);
      // Whether it holds any was just asked: the read is told so rather than asking again.
      expect(reading.mock.lastCall?.[3]).toBe(true);
    } finally {
      counting.restore();
      reading.mockRestore();
    }
  }, 120_000);

  test('related sessions: while the recent index holds none of the caller’s sessions its word counts are not asked there; a session written since is counted and found', async () => {
    const h = harness();
    const user = await h.user();
    const [a, b, c] = [word(), word(), word()];
    const text = (title: string) => `# ${title}\n\nThe ${a} and the ${b} broke the ${c} again.\n`;
    const [first, second, third] = [newSessionId(), newSessionId(), newSessionId()];
    await h.put(user, 'related-none', first, { markdown: text('First') });
    await h.put(user, 'related-none', second, { markdown: text('Second') });
    // A word held by every session weighs nothing: one session holds none of them.
    await h.put(user, 'related-none', newSessionId(), { markdown: `# Else\n\nThe ${word()} and the ${word()} again.\n` });
    await h.settle();
    await h.search.compact(0);
    await h.settle();
    forgetCounts();
    // A search sees that the recent index holds none of the caller's documents.
    expect(ids(await searchSessions(again(user), { query: a })).sort()).toEqual([first, second].sort());
    // The indexes whose counts each call asks for, and the documents it reads of the recent index.
    const counting = countedIndexes(h.search.indexUid);
    const reading = jest.spyOn(Index.prototype, 'getDocuments');
    const recentReads = () => reading.mock.contexts.filter((index) => index.uid === recentUidOf(h.search.indexUid)).length;
    const related = async () => {
      counting.take();
      reading.mockClear();
      const found = (await relatedSessions(again(user), 'related-none', first, 5)).map((r) => r.sessionId);
      return { found: found.sort(), asked: counting.take() };
    };
    try {
      expect(await related()).toEqual({ found: [second], asked: ['main'] });
      // Whether the recent index holds any of the caller's documents is asked once (by the counts;
      // the search after them knows it).
      expect(recentReads()).toBe(1);
      // Written since: in the recent index only, its words counted there, and found.
      await h.put(user, 'related-none', third, { markdown: text('Third') });
      await h.settle();
      expect(await related()).toEqual({ found: [second, third].sort(), asked: ['main', 'recent'] });
    } finally {
      counting.restore();
      reading.mockRestore();
    }
  }, 120_000);

  test('with a large session among the matches, totals are exact before and after its listing goes with the page', async () => {
    const h = harness();
    const user = await h.user();
    const [shared, second, onlySmall] = [word(), word(), word()];
    const large = newSessionId();
    const small = [newSessionId(), newSessionId()];
    const part = (i: number) => `## Exchange ${i}\n\n${'We listed the large sessions again. '.repeat(50)}${shared} ${second}\n\n`;
    await h.put(user, 'large-hint', large, { markdown: Array.from({ length: 60 }, (_, i) => part(i)).join('') });
    await h.put(user, 'large-hint', small[0], { markdown: `# Small\n\n${shared} and ${onlySmall}.\n` });
    await h.put(user, 'large-hint', small[1], { markdown: `# Small too\n\n${shared} with ${second}.\n` });
    await h.settle(120_000);
    await h.search.compact();
    await h.settle(120_000);
    forgetCounts();
    // Whether each search's listing was hinted, so sent with its page.
    const hinted: boolean[] = [];
    const real = countCache.largeSessionsCount;
    const counting = jest.spyOn(countCache, 'largeSessionsCount').mockImplementation((uid, filter, ask) => {
      hinted.push(countCache.largeSessionsLikely(uid, filter));
      return real(uid, filter, ask);
    });
    try {
      const totalOf = async (query: string) => (await searchSessions(again(user), { query })).total;
      // One word (one request and its count) and two (the planned page), with the same filter: the
      // first search finds the large session after its page, the next ones list it with theirs.
      for (const query of [shared, `${shared} ${second}`]) {
        expect(await totalOf(query)).toBe(3);
        expect(await totalOf(query)).toBe(3);
      }
      expect(hinted).toEqual([false, true, true, true]);
      // Expected large sessions that are not there: the whole sessions alone, counted once.
      expect(await totalOf(onlySmall)).toBe(1);
      expect(await totalOf(`${onlySmall} ${word()}`)).toBe(1);
    } finally {
      counting.mockRestore();
    }
  }, 300_000);
});
