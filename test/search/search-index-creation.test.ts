/**
 * Creating an index on an engine too busy to create it at once. The service waits a few seconds
 * for the creation and retries every 2 s while the index is not ready; each retry must wait on the
 * creation already asked for, not queue another one, and the call that sees it done must report
 * the index as created (so that the service rebuilds it from the database).
 */
import { Meilisearch } from 'meilisearch';
import { createNodeHttpClient } from '../../src/search/engine/http-client';
import { ensureIndex } from '../../src/search/engine/index-settings';
import { testMeiliEnv } from '../support/meili-engine';
import { ENGINE_TASK_WAIT, randomWord } from '../support/meili-harness';

const httpClient = createNodeHttpClient();
const env = testMeiliEnv();
const client = new Meilisearch({ host: env.MEILI_URL || env.MEILI_URLS.split(',')[0], apiKey: env.MEILI_MASTER_KEY || undefined, httpClient });
const uid = `creation_${randomWord()}`;

afterAll(async () => {
  await client
    .deleteIndex(uid)
    .waitTask(ENGINE_TASK_WAIT)
    .catch(() => undefined);
  httpClient.destroy();
});

test('a creation that outlasts its wait is waited on again, asked once, and reported created once', async () => {
  const results: boolean[] = [];
  let timeouts = 0;
  // A wait of 1 ms: the first call (at least) gives up before the engine has applied the creation.
  // Asked again until one sees it done: bounded by time, not by a number of calls, since the
  // shared engine may be busy with other suites' work for a while before it applies the creation.
  const until = Date.now() + 45_000;
  while (results.length === 0 && Date.now() < until) {
    try {
      results.push(await ensureIndex(client, uid, 1));
    } catch (err) {
      expect((err as Error).name).toBe('MeilisearchTaskTimeOutError');
      timeouts++;
      await new Promise((r) => setTimeout(r, 10));
    }
  }
  expect(timeouts).toBeGreaterThan(0);
  expect(results).toEqual([true]);
  // Later calls find the index there: not theirs to rebuild.
  expect(await ensureIndex(client, uid, 1)).toBe(false);
  const creations = await client.tasks.getTasks({ indexUids: [uid], types: ['indexCreation'] });
  expect(creations.results).toHaveLength(1);
  expect(creations.results[0].status).toBe('succeeded');
}, 60_000);
