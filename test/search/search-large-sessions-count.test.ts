/**
 * A several-word search's total with large sessions among its matches (planned-page.ts,
 * federatedPage), on a real engine started here (support/meili-engines.ts, stopped at the end,
 * also on failure) holding documents written directly: the large sessions are counted by a facet
 * of their `sessionDigest`, which lists at most the index's `maxValuesPerFacet` values; past
 * that, they are listed instead, so the total stays exact.
 */
import crypto from 'node:crypto';
import { Meilisearch } from 'meilisearch';
import { createNodeHttpClient } from '../../src/search/engine/http-client';
import { INDEX_SETTINGS, indexSettingsFor } from '../../src/search/engine/index-settings';
import { federatedPage, federatedQueries, wordCounts } from '../../src/search/engine/planned-page';
import { planQuery } from '../../src/search/engine/query-plan';
import { TestEngines } from '../support/meili-engines';

jest.setTimeout(120_000);

let set: TestEngines;
const httpClient = createNodeHttpClient();
let client: Meilisearch;

beforeAll(async () => {
  set = await TestEngines.start(1);
  client = new Meilisearch({ host: set.urls()[0], apiKey: set.key, httpClient });
});

afterAll(async () => {
  httpClient.destroy();
  await set?.stop();
});

/** An index holding `large` large sessions (three documents each) and `whole` sessions indexed whole, all of one user, all matching "quartz lantern". */
async function indexOf(large: number, whole: number): Promise<string> {
  const uid = `count_${crypto.randomBytes(4).toString('hex')}`;
  await client.createIndex(uid, { primaryKey: 'id' }).waitTask({ timeout: 60_000 });
  const settings = await client.index(uid).updateSettings(indexSettingsFor(uid)).waitTask({ timeout: 60_000 });
  expect(settings.status).toBe('succeeded');
  const doc = (session: number, chunk: number, isWhole: boolean) => ({
    id: `s${session}-${chunk}`,
    userId: 'owner',
    sessionDigest: crypto.createHash('sha256').update(`s${session}`).digest('hex').slice(0, 20),
    chunk,
    whole: isWhole,
    name: `Session ${session}`,
    content: `We lit the quartz lantern in part ${chunk}.`,
  });
  const docs = [
    ...Array.from({ length: large }, (_, s) => [0, 1, 2].map((c) => doc(s, c, false))).flat(),
    ...Array.from({ length: whole }, (_, s) => doc(large + s, 0, true)),
  ];
  const task = await client.index(uid).addDocuments(docs).waitTask({ timeout: 60_000 });
  expect({ status: task.status, error: task.error ?? null }).toEqual({ status: 'succeeded', error: null });
  return uid;
}

const totalOf = async (uid: string) => {
  const plan = planQuery('quartz lantern');
  const filter = 'userId = "owner"';
  const queries = federatedQueries(plan, await wordCounts(client, uid, plan, filter));
  expect(queries).not.toBeNull();
  return (await federatedPage(client, uid, queries!, { filter, distinct: 'sessionDigest' }, 0, 10)).total;
};

test('fewer large sessions than a facet lists: counted by the facet, exactly', async () => {
  expect(await totalOf(await indexOf(40, 7))).toBe(47);
});

test('more large sessions than a facet lists: listed, and the total stays exact', async () => {
  const large = INDEX_SETTINGS.faceting.maxValuesPerFacet + 30;
  expect(await totalOf(await indexOf(large, 7))).toBe(large + 7);
});
