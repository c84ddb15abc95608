/** What the engine is asked for a query: stop words out, at most 10 words, phrases whole (no engine needed). */
import { planQuery, ENGINE_WORDS } from '../src/search/engine/query-plan';
import { federatedQueries } from '../src/search/engine/planned-page';

describe('the engine query of a question', () => {
  test('words without meaning in a question are left out; only such words are kept as they are', () => {
    expect(planQuery('what did we decide about rate limiting?')).toEqual({ q: 'decide rate limiting', words: ['decide', 'rate', 'limiting'], phrases: [] });
    expect(planQuery("How do we're the")).toMatchObject({ words: ['how', 'do', 'we', 're', 'the'] });
  });

  test('quoted phrases are kept whole, first; words repeat once', () => {
    expect(planQuery('retry the "connection pool" retry')).toEqual({ q: '"connection pool" retry', words: ['retry'], phrases: ['connection pool'] });
    // An unclosed quote is read as loose words.
    expect(planQuery('"connection pool').words).toEqual(['connection', 'pool']);
  });

  test('past the engine’s 10 words, the longest are kept, in the order of the query', () => {
    const q = 'alpha bb cc dd ee ff gg hh ii jj kk longestword mediumword';
    const plan = planQuery(q);
    expect(plan.words).toHaveLength(ENGINE_WORDS);
    expect(plan.words.slice(0, 1)).toEqual(['alpha']);
    expect(plan.words.slice(-2)).toEqual(['longestword', 'mediumword']);
  });

  test('several words: the whole query and each word alone, rarest first and weighted by rarity; words nobody holds left out', () => {
    const plan = planQuery('common rare missing');
    const queries = federatedQueries(plan, { documents: 100, holding: [90, 2, 0] })!;
    expect(queries.map((x) => x.q)).toEqual(['rare common', 'rare', 'common']);
    expect(queries[0]).toMatchObject({ matchingStrategy: 'last', weight: 1 });
    expect(queries[1].weight).toBeGreaterThan(queries[2].weight);
    expect(federatedQueries(planQuery('one'))).toBeNull();
    expect(federatedQueries(plan, { documents: 100, holding: [0, 0, 0] })).toBeNull();
  });
});
