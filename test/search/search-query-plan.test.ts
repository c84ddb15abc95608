/** What the engine is asked for a query: stop words out, at most 10 words, phrases whole (no engine needed). */
import { planQuery, ENGINE_WORDS } from '../../src/search/engine/query-plan';
import { federatedQueries, FORMS_WEIGHT } from '../../src/search/engine/planned-page';
import { formsOf } from '../../src/domain/word-forms';

describe('the engine query of a question', () => {
  test('words without meaning in a question are left out; only such words are kept as they are', () => {
    expect(planQuery('what did we decide about rate limiting?')).toEqual({
      q: 'decide rate limiting',
      words: ['decide', 'rate', 'limiting'],
      phrases: [],
      forms: [['decid'], ['rate'], ['limit']],
    });
    expect(planQuery("How do we're the")).toMatchObject({ words: ['how', 'do', 'we', 're', 'the'] });
  });

  test('quoted phrases are kept whole, first; words repeat once', () => {
    expect(planQuery('retry the "connection pool" retry')).toEqual({
      q: '"connection pool" retry',
      words: ['retry'],
      phrases: ['connection pool'],
      forms: [['retri']],
    });
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
    const plan = planQuery('common rare middle missing');
    const queries = federatedQueries(plan, { documents: 100, holding: [90, 2, 50, 0], holdingForms: [90, 2, 50, 0] })!;
    const exact = queries.filter((x) => !x.forms);
    expect(exact.map((x) => x.q)).toEqual(['rare middle common', 'rare', 'middle', 'common']);
    expect(exact[0]).toMatchObject({ matchingStrategy: 'last', weight: 1 });
    expect(exact[1].weight).toBeGreaterThan(exact[2].weight);
    expect(exact[2].weight).toBeGreaterThan(exact[3].weight);
    expect(federatedQueries(plan, { documents: 100, holding: [0, 0, 0, 0], holdingForms: [0, 0, 0, 0] })).toBeNull();
    // Phrases only: asked as they are.
    expect(federatedQueries(planQuery('"connection pool"'))).toBeNull();
  });

  test('past three words, each word alone weighs less, in proportion to the words asked', () => {
    // `middle` weighs the same against the rarest word in each (same counts).
    const middle = (q: string, holding: number[]) =>
      federatedQueries(planQuery(q), { documents: 100, holding, holdingForms: holding })!.find((x) => !x.forms && x.q === 'middle')!.weight;
    const three = middle('rare middle common', [2, 50, 90]);
    expect(middle('rare middle', [2, 50])).toBeCloseTo(three);
    expect(middle('rare middle common fourth', [2, 50, 90, 95])).toBeCloseTo((three * 3) / 4);
    expect(middle('rare middle common fourth fifth sixth', [2, 50, 90, 95, 96, 97])).toBeCloseTo(three / 2);
  });

  test('every word has its forms query: marked stems, weighted down, no prefix; an identifier by its parts', () => {
    expect(planQuery('retryWithBackoff').forms).toEqual([['retri', 'backoff']]);
    expect(planQuery('useEffect loop').forms).toEqual([['use', 'effect'], ['loop']]);
    // One word: its exact query and its forms query, which needs all of an identifier's parts.
    const one = federatedQueries(planQuery('retryWithBackoff'))!;
    expect(one).toEqual([
      { q: 'retrywithbackoff', matchingStrategy: 'last', weight: 1, forms: false },
      { q: 'qqfretri qqfbackoff ', matchingStrategy: 'all', weight: FORMS_WEIGHT, forms: true },
    ]);
    // A word held only in another form is kept, asked in its forms only.
    const plan = planQuery('retrying jobs');
    const queries = federatedQueries(plan, { documents: 10, holding: [0, 3], holdingForms: [2, 3] })!;
    // (`retrying`'s own forms query and a second `jobs` would find only what the first two find;
    // `jobs`'s forms query, what `jobs` finds: no more documents hold its forms.)
    expect(queries.map((x) => [x.q, x.forms])).toEqual([
      ['jobs', false],
      ['qqfretri qqfjob ', true],
    ]);
    expect(federatedQueries(plan, { documents: 10, holding: [0, 3], holdingForms: [2, 4] })!.map((x) => x.q)).toContain('qqfjob ');
    // Numbers and other scripts have no forms: asked as written in the forms query too.
    expect(federatedQueries(planQuery('401 überall'))![1].q).toBe('401 überall ');
  });

  test('two words: the whole queries cover the first word, which gets no queries of its own', () => {
    const plan = planQuery('rare common');
    const queries = federatedQueries(plan, { documents: 100, holding: [2, 90], holdingForms: [2, 95] })!;
    expect(queries.map((x) => [x.q, x.matchingStrategy, x.forms])).toEqual([
      ['rare common', 'last', false],
      ['qqfrare qqfcommon ', 'last', true],
      ['common', 'all', false],
      ['qqfcommon ', 'all', true],
    ]);
    // A word whose forms no more documents hold than the word itself: no forms query of its own.
    const same = federatedQueries(plan, { documents: 100, holding: [2, 90], holdingForms: [2, 90] })!;
    expect(same.map((x) => x.q)).toEqual(['rare common', 'qqfrare qqfcommon ', 'common']);
    // Counts without forms counts (a caller's own): every word keeps its forms query.
    expect(federatedQueries(plan, { documents: 100, holding: [2, 90] })!.map((x) => x.q)).toContain('qqfcommon ');
    // The rarer word typed last keeps its own query: only there is it matched as a prefix.
    const typed = federatedQueries(planQuery('common rare'), { documents: 100, holding: [90, 2], holdingForms: [90, 2] })!;
    expect(typed.filter((x) => !x.forms).map((x) => x.q)).toEqual(['rare common', 'rare', 'common']);
    // Three words: each keeps its own queries (a session holding only the first would score lower in the whole query).
    const three = federatedQueries(planQuery('rare common middle'), { documents: 100, holding: [2, 90, 50], holdingForms: [2, 90, 50] })!;
    expect(three.filter((x) => !x.forms).map((x) => x.q)).toEqual(['rare middle common', 'rare', 'middle', 'common']);
    // An identifier's parts as the first word: its forms query needs them all, which the whole forms query (`last`) does not.
    const ident = federatedQueries(planQuery('retryWithBackoff jobs'), { documents: 100, holding: [2, 90], holdingForms: [5, 90] })!;
    expect(ident.map((x) => x.q)).toContain('qqfretri qqfbackoff ');
  });
});

describe('the forms a document holds', () => {
  test("each word's forms together, words' forms apart (no word pairs between them), each listed once", () => {
    expect(formsOf(['retry retries retryWithBackoff and userById retry 42 überall'], 100)).toBe(
      'qqfretri;qqfretrywithbackoff qqfretri qqfwith qqfbackoff;qqfand;qqfuserbyid qqfuser qqfby qqfid',
    );
  });

  test('past the positions the engine reads, forms follow each other without separators', () => {
    const words = Array.from({ length: 10_000 }, (_, i) => `w${i.toString(36)}x`);
    // Words and separators (`;`, between entries; a space within one).
    const forms = formsOf([words.join(' ')], 60_000)
      .split(/ |(;)/)
      .filter(Boolean);
    const separators = forms.filter((f) => f === ';').length;
    const entries = forms.length - separators;
    expect(new Set(forms.filter((f) => f !== ';')).size).toBe(entries);
    expect(entries).toBeGreaterThan(9_000);
    // Each separator counts 8 positions: all of them fit in 65,000 positions, and some are left out.
    expect(entries + 8 * separators).toBeLessThanOrEqual(65_000);
    expect(separators).toBeGreaterThan(6_000);
    expect(separators).toBeLessThan(entries - 1);
  });
});
