/**
 * A word of a several-word query that the archive holds only in another form (`retries` where a
 * session says `retrying`) is searched in its forms, not left out: beside a word no session holds,
 * and beside a word other sessions hold, in the recent index and, after compaction, the main one.
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

test('a word held only in another form is searched in its forms beside the other words', async () => {
  const user = await h.user();
  const nowhere = word();
  const common = word();
  const retrying = newSessionId();
  const others = [newSessionId(), newSessionId()];
  await h.put(user, 'forms', retrying, { name: 'retrying', markdown: `# Jobs\n\nThe job kept retrying ${common}.\n` });
  for (const id of others) await h.put(user, 'forms', id, { name: 'other', markdown: `# Other\n\nNothing of that kind, ${common}.\n` });
  const ids = (r: { results: Array<{ sessionId: string }> }) => r.results.map((x) => x.sessionId);
  const check = async () => {
    expect(ids(await searchSessions(again(user), { query: 'retries' }))).toEqual([retrying]);
    expect(ids(await searchSessions(again(user), { query: `retries ${nowhere}` }))).toEqual([retrying]);
    // Every session holds the common word; the one holding a form of `retries` too ranks first.
    const both = ids(await searchSessions(again(user), { query: `retries ${common}` }));
    expect(both[0]).toBe(retrying);
    expect([...both].sort()).toEqual([retrying, ...others].sort());
  };
  await h.settle();
  await check();
  await h.search.compact(0);
  await h.settle();
  await check();
});
