/**
 * A long question's page is ranked by how much of the question each hit holds, weighed by rarity:
 * the session holding every word but the rarest comes before one holding the rarest word and
 * little else (the engine's whole query requires its rarest word). Short queries keep the
 * engine's order; each page stays the set of sessions the engine ranked there.
 */
import { searchSessions } from '../../src/services/search';
import { coverageOf, COVERAGE_WEIGHT, heldWordsOf } from '../../src/search/engine/coverage';
import { matchRanges, parseQuery, wordsHeld } from '../../src/search/engine/highlight';
import { planQuery } from '../../src/search/engine/query-plan';
import { newSessionId, startSearchHarness, type SearchHarness, randomWord, again } from '../support/meili-harness';

describe('which words a text holds', () => {
  const held = (text: string, query: string) => {
    const plan = planQuery(query);
    const ranges = matchRanges(text, parseQuery(plan.q, plan.forms?.flat() ?? []));
    return wordsHeld(text, ranges, heldWordsOf(plan));
  };

  test('as written, with a typo, in another form, as an identifier part and as the last word typed', () => {
    expect(held('The worker kept retrying the upload; see autoRetryCount and conection pools.', 'retries connection worker upl')).toEqual([
      true,
      true,
      true,
      true,
    ]);
    expect(held('Nothing of that kind here.', 'retries connection worker')).toEqual([false, false, false]);
  });

  test('a query of at most three words, or without counts, keeps the engine order', () => {
    const counts = { documents: 10, holding: [1, 2, 3, 4] };
    expect(coverageOf(planQuery('alpha beta gamma'), { documents: 10, holding: [1, 2, 3] })).toBeNull();
    expect(coverageOf(planQuery('alpha beta gamma delta'), undefined)).toBeNull();
    const score = coverageOf(planQuery('alpha beta gamma delta'), counts)!;
    const text = 'alpha beta gamma delta';
    expect(score(text, matchRanges(text, 'alpha beta gamma delta'))).toBeCloseTo(COVERAGE_WEIGHT);
    // The rarest word weighs the most: holding it alone scores more than holding the commonest alone.
    const rare = score('alpha', matchRanges('alpha', 'alpha beta gamma delta'));
    const common = score('delta', matchRanges('delta', 'alpha beta gamma delta'));
    expect(rare).toBeGreaterThan(common);
    expect(common).toBeGreaterThan(0);
  });
});

describe('a long question over the archive', () => {
  let h: SearchHarness;
  beforeAll(async () => {
    h = await startSearchHarness();
  }, 60_000);
  afterAll(async () => {
    await h?.close();
  });

  test('the session holding all but the rarest word ranks before one holding the rarest word and two others', async () => {
    const user = await h.user();
    const [rare, ...common] = Array.from({ length: 7 }, () => randomWord());
    const answer = newSessionId();
    const decoy = newSessionId();
    await h.put(user, 'coverage', answer, { name: 'answer', markdown: `# Notes\n\n${common.join(' and ')}.\n` });
    await h.put(user, 'coverage', decoy, { name: 'decoy', markdown: `# Other\n\n${rare} with ${common[0]} and ${common[1]}.\n` });
    // Each common word is held by more sessions than the rare one.
    for (let i = 0; i < 3; i++) {
      await h.put(user, 'coverage', newSessionId(), { name: `filler ${i}`, markdown: `# Filler\n\n${common.slice(2 * i, 2 * i + 3).join(' ')}.\n` });
    }
    await h.settle();
    const question = `${rare} ${common.join(' ')}`;
    const ids = (r: { results: Array<{ sessionId: string }> }) => r.results.map((x) => x.sessionId);
    const all = ids(await searchSessions(again(user), { query: question, limit: 10 }));
    expect(all.slice(0, 1)).toEqual([answer]);
    expect(all.indexOf(decoy)).toBeGreaterThan(0);
    // Ranks follow the order.
    const page = await searchSessions(again(user), { query: question, limit: 10 });
    const ranks = page.results.map((r) => r.rank);
    expect([...ranks].sort((a, b) => b - a)).toEqual(ranks);
    // Pages of two are the same sessions as the whole list, each once.
    const paged: string[] = [];
    for (let offset = 0; offset < all.length; offset += 2) paged.push(...ids(await searchSessions(again(user), { query: question, limit: 2, offset })));
    expect([...paged].sort()).toEqual([...all].sort());
  }, 60_000);
});
