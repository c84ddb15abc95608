/**
 * What one query costs the engine before it does any work: on a throwaway engine, an index of a
 * few short documents is asked an empty query (`limit: 0`) with the engine's default settings,
 * then with each of the index's declared settings (src/search/engine/index-settings.ts) applied
 * alone, then with all of them. A setting whose floor is far above the default's costs that much
 * in every query of every search: a search of several words asks 6–9 (counts, then a federated
 * page), related sessions 30 or more.
 *
 *   npx tsx bench/engine-floor.ts [--rounds=300]
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Meilisearch, type Settings } from 'meilisearch';
import { EmbeddedMeili } from '../src/search/embedded/embedded';
import { createNodeHttpClient } from '../src/search/engine/http-client';
import { INDEX_SETTINGS } from '../src/search/engine/index-settings';
import { arg, percentile } from './support';

const ROUNDS = Number(arg('rounds') ?? 300);
const WARM_UP = 50;
const DOCUMENTS = 100;
const log = (s: string) => process.stdout.write(`${s}\n`);

async function main() {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sa-engine-floor-'));
  const engine = new EmbeddedMeili({ dataDir });
  try {
    await engine.start();
    const client = new Meilisearch({ host: engine.url!, apiKey: engine.masterKey, httpClient: createNodeHttpClient() });
    const floor = async (label: string, settings: Settings) => {
      const uid = 'floor';
      await client.deleteIndex(uid).waitTask();
      await client.createIndex(uid, { primaryKey: 'id' }).waitTask();
      await client
        .index(uid)
        .addDocuments(Array.from({ length: DOCUMENTS }, (_, id) => ({ id, content: `hello world ${id}` })))
        .waitTask();
      await client.index(uid).updateSettings(settings).waitTask();
      const times: number[] = [];
      for (let i = 0; i < ROUNDS + WARM_UP; i++) {
        const t = performance.now();
        await client.multiSearch({ queries: [{ indexUid: uid, q: '', limit: 0 }] });
        if (i >= WARM_UP) times.push(performance.now() - t);
      }
      log(`  ${label.padEnd(36)} p50 ${percentile(times, 50).toFixed(2).padStart(6)} ms   p95 ${percentile(times, 95).toFixed(2).padStart(6)} ms`);
    };
    log(`engine floor: an empty query on ${DOCUMENTS} documents, ${ROUNDS} rounds each`);
    await floor('the engine defaults', {});
    for (const [key, value] of Object.entries(INDEX_SETTINGS)) await floor(`only ${key}`, { [key]: value });
    await floor('all the declared settings', INDEX_SETTINGS);
  } finally {
    await engine.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
