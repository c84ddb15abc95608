/**
 * The search options related sessions use (src/services/related.ts), on the real engine: counts
 * the caller already has weigh the words instead of the search's own counting (a word said to be
 * rare ranks its sessions first), `wordForms: false` finds the words as written only, and
 * `countTotal: false` returns the same page; in the recent index and, after compaction, the main one.
 */
import { searchSessions } from '../../src/services/search';
import { newSessionId, startSearchHarness, type SearchHarness, randomWord, again } from '../support/meili-harness';

let h: SearchHarness;

beforeAll(async () => {
  h = await startSearchHarness();
}, 60_000);
afterAll(async () => {
  await h?.close();
});

const word = () => randomWord();

test('known counts weigh the words; wordForms false finds the words as written only; countTotal false gives the same page', async () => {
  const user = await h.user();
  const [w1, w2, w3] = [word(), word(), word()];
  const one = newSessionId();
  const two = newSessionId();
  const forms = newSessionId();
  await h.put(user, 'options', one, { name: 'one', markdown: `# one\n\nThe ${w1} notes.\n` });
  await h.put(user, 'options', two, { name: 'two', markdown: `# two\n\nThe ${w2} notes.\n` });
  // Holds another form of "retries" only, and w3.
  await h.put(user, 'options', forms, { name: 'forms', markdown: `# forms\n\nThe job kept retrying ${w3}.\n` });
  const ids = (r: { results: Array<{ sessionId: string }> }) => r.results.map((x) => x.sessionId);
  const known = (rare: string, common: string) => ({
    documents: 1000,
    holding: new Map([
      [rare, 2],
      [common, 900],
    ]),
  });
  const check = async () => {
    const query = `${w1} ${w2}`;
    const rareFirst = await searchSessions(again(user), { query, knownCounts: known(w1, w2) });
    expect(ids(rareFirst)).toEqual([one, two]);
    const flipped = await searchSessions(again(user), { query, knownCounts: known(w2, w1) });
    expect(ids(flipped)).toEqual([two, one]);
    // Known counts that miss a word: the search counts for itself.
    const partial = await searchSessions(again(user), { query, knownCounts: { documents: 1000, holding: new Map([[w1, 2]]) } });
    expect(ids(partial).sort()).toEqual([one, two].sort());

    expect(ids(await searchSessions(again(user), { query: 'retries' }))).toEqual([forms]);
    expect(ids(await searchSessions(again(user), { query: 'retries', wordForms: false }))).toEqual([]);
    const asWritten = await searchSessions(again(user), { query: `retrying ${w3}`, wordForms: false });
    expect(ids(asWritten)).toEqual([forms]);
    expect(asWritten.results[0].snippet).toContain('<mark>retrying</mark>');

    const counted = await searchSessions(again(user), { query: `${w1} ${w2} ${w3}` });
    const uncounted = await searchSessions(again(user), { query: `${w1} ${w2} ${w3}`, countTotal: false });
    expect(counted.total).toBe(3);
    expect(ids(uncounted)).toEqual(ids(counted));
  };
  await h.settle();
  await check();
  await h.search.compact(0);
  await h.settle();
  await check();
});
